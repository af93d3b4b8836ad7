"""All of CapaBench's Coq reference proofs through the whole episode, as a model writes them.

Each of the 111 problems in ``../shared/capabench/atp/coq.json`` runs one
episode per answer form: the PRAF modules on a scripted model whose action
answer is the reference proof in a fenced block, on one line (how
CapaBench stores them) or one Coq sentence per line. The answer goes
through the action parser (the environment's declared format: ``proof``),
the sandboxed coqc and the trusted check, exactly as in a run. Printed: per
form, how many were solved, and each one that was not with the check's
message. ``tests/environments/atp/test_atp_coq.py`` runs 20 of them in the suite.

    python benchmarks/atp_reference_proofs.py            # about 2-4 minutes of Coq
    python benchmarks/atp_reference_proofs.py --limit 10
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Sequence
from pathlib import Path

import anyio

from agentbus.core import registry
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.outcome import Outcome
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from environments.atp.env import AtpEnvironment
from environments.atp.loader import load_problems
from environments.atp.problem import Problem
from environments.atp.prover import Checker

COQ = Path(__file__).resolve().parents[2] / "shared" / "capabench" / "atp" / "coq.json"
SLOTS = ("planning", "reasoning", "action", "reflection")


def forms(reference: str) -> dict[str, str]:
    """The reference proof as an action answer: on one line, and one sentence per line."""
    one = " ".join(reference.split())
    many = re.sub(r"[.]\s+", ".\n", one)  # a Coq sentence ends at '.' and a blank
    return {"one line": f"```action\n{one}\n```", "multi-line": f"```action\n{many}\n```"}


class ScriptModel:
    """Writes ``answer`` in the action role, a line of working in the others."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        role = messages[0]["content"].split(" module", 1)[0].rsplit(" ", 1)[-1]
        text = self.answer if role == "action" else "Introduce the variables, then close it."
        return Completion(text=text, model="script")


async def run(problems: list[Problem]) -> dict[str, dict[str, Outcome]]:
    checker = Checker(parallel=4)
    agent = registry.get("agents", "praf")
    out: dict[str, dict[str, Outcome]] = {}

    async def one(form: str, p: Problem, answer: str) -> None:
        llm = ScriptModel(answer)
        actors = [ActorSpec(s, registry.get("modules", agent[s]), llm=llm) for s in SLOTS]
        spec = EpisodeSpec(f"{form}|{p.id}", p.to_task(), lambda: AtpEnvironment(checker), actors)
        out.setdefault(form, {})[p.id] = await Episode(spec).run()

    async with anyio.create_task_group() as tg:
        for p in problems:
            for form, answer in forms(p.reference).items():
                tg.start_soon(one, form, p, answer)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=COQ)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    problems = load_problems(args.file)[: args.limit]
    started = time.perf_counter()
    outcomes = anyio.run(run, problems)
    print(f"{len(problems)} problems, {time.perf_counter() - started:.0f} s")
    for form, by_id in outcomes.items():
        solved = sum(o.success for o in by_id.values())
        print(f"{form}: {solved} of {len(by_id)} solved")
        for pid, o in sorted(by_id.items()):
            if not o.success:
                message = str(o.details.get("last_message") or o.reason).splitlines()
                print(f"  {pid}: {' / '.join(message[:3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
