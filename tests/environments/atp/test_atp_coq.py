"""The ATP environment against the real coqc, in the sandbox.

CapaBench's 111 Coq reference proofs, written as a model writes them (on one
line, and one sentence per line), go through the action parser to one script
each; 20 of them, spread over the file, then run the whole episode (PRAF
modules, parser, sandboxed coqc, the trusted check) and are scored solved,
coq-106 among them, whose reference uses a lemma its own file leaves
``Admitted`` (allowed: the axioms the reference proof rests on are the
problem's given context; all 111 through the episode:
``benchmarks/atp_reference_proofs.py``). ``Admitted``, an added axiom and a
redefinition are refused; an axiom that slips into the file is caught by the
separate check; failures report the remaining goals; Lean and Isabelle are
refused in one line (exit status 2). The red-team attacks are in
``test_atp_redteam.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from agentbus import TaskSource, UserError, registry
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.outcome import Outcome
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from environments.atp.env import AtpEnvironment
from environments.atp.generator import KINDS, generate, linear_system, make
from environments.atp.guide import atp_guide
from environments.atp.loader import load_problems
from environments.atp.problem import Problem
from environments.atp.prover import Checker, available
from environments.sandbox import unavailable
from modules.praf import AGENT, SLOTS
from modules.praf.parsing import parse_action

ATP = Path(__file__).resolve().parents[4] / "shared" / "capabench" / "atp"
needs_coq = pytest.mark.skipif(
    available("coq") is not None or unavailable() is not None,
    reason=str(available("coq") or unavailable()),
)
needs_shared = pytest.mark.skipif(not ATP.is_dir(), reason=f"no shared data at {ATP}")


async def _check_all(checker: Checker, problems: list[Problem]) -> list[bool]:
    accepted: dict[str, bool] = {}

    async def one(p: Problem) -> None:
        accepted[p.id] = (await checker.check(p, p.reference)).accepted

    async with anyio.create_task_group() as tg:
        for p in problems:
            tg.start_soon(one, p)
    return [accepted[p.id] for p in problems]


#: a problem whose reference proof rests on a lemma its own file leaves ``Admitted``
GIVEN = "coq-106"


def _answers(reference: str) -> tuple[str, str]:
    """The reference proof as a model writes it: on one line, and one sentence per line."""
    one = " ".join(reference.split())
    many = re.sub(r"[.]\s+", ".\n", one)  # a Coq sentence ends at '.' and a blank
    return f"```action\n{one}\n```", f"```action\n{many}\n```"


class ProofModel:
    """A model that writes ``answer`` in the action role and short working elsewhere."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        role = messages[0]["content"].split(" module", 1)[0].rsplit(" ", 1)[-1]
        text = {
            "planning": "1. Introduce the variables.\n2. Close the goal.",
            "action": self.answer,
        }.get(role, "Write the proof.")
        return Completion(text=text, model="script")


@needs_shared
def test_capabench_reference_proofs_parse_to_one_script_on_one_line_or_many() -> None:
    prompt = "\n".join(atp_guide().values())
    problems = load_problems(ATP / "coq.json")
    assert len(problems) == 111
    for p in problems:
        one, many = (
            parse_action(a, prompt=prompt, fmt=AtpEnvironment.action_format)
            for a in _answers(p.reference)
        )
        assert one.text is not None and many.text is not None, (p.id, one, many)
        assert " ".join(many.text.split()) == one.text == " ".join(p.reference.split())


@needs_coq
@needs_shared
async def test_capabench_reference_proofs_solve_their_episodes() -> None:
    """Parser, sandbox and trusted check in one episode, from the one-line answer."""
    every = load_problems(ATP / "coq.json")
    problems = [every[i * len(every) // 20] for i in range(20)]
    checker = Checker(parallel=4)
    outcomes: dict[str, Outcome] = {}

    async def one(p: Problem) -> None:
        llm = ProofModel(_answers(p.reference)[0])
        actors = [ActorSpec(s, registry.get("modules", AGENT[s]), llm=llm) for s in SLOTS]
        spec = EpisodeSpec(p.id, p.to_task(), lambda: AtpEnvironment(checker), actors)
        outcomes[p.id] = await Episode(spec).run()

    async with anyio.create_task_group() as tg:
        for p in problems:
            tg.start_soon(one, p)
    failed = {
        k: o.details.get("last_message", o.error) for k, o in outcomes.items() if not o.success
    }
    assert len(outcomes) == 20 and not failed, failed
    assert all(o.steps == 1 and o.reward == 1.0 for o in outcomes.values())
    # add_assoc is the problem's given context, as for the reference: named, not refused
    given = str(outcomes[GIVEN].details.get("last_message"))
    assert "axioms the problem's own file brings" in given and "add_assoc" in given


@needs_coq
async def test_generated_reference_proofs_are_accepted() -> None:
    problems = [make(kind, 1, i) for i, kind in enumerate(KINDS * 2)]  # every kind twice
    assert all(await _check_all(Checker(parallel=4), problems))


@needs_coq
async def test_cheats_are_refused_and_failures_show_goals() -> None:
    problem = make(linear_system, 0, 0)
    checker = Checker()
    admitted = await checker.check(problem, "Proof. intros. Admitted.")
    assert not admitted.accepted and "Admitted" in admitted.message
    axiom = await checker.check(problem, "Proof. lia. Qed.\nAxiom cheat : False.")
    assert not axiom.accepted and "Axiom" in axiom.message
    redefined = await checker.check(
        problem, f"Abort.\nTheorem {problem.theorem} : True. Proof. exact I. Qed."
    )
    assert not redefined.accepted
    short = await checker.check(problem, "Proof. intros. Qed.")
    assert not short.accepted and "Remaining goals" in short.message


@needs_coq
async def test_an_axiom_in_the_file_is_caught_by_print_assumptions() -> None:
    base = make(linear_system, 0, 0)
    source = base.source.replace(" Fact ", " Axiom everything : forall P : Prop, P.\n Fact ", 1)
    # the reference proof does not need it, so the problem's own context does not hold it
    problem = Problem(base.id, "coq", source, base.theorem, base.reference)
    result = await Checker().check(problem, "Proof. apply everything. Qed.")
    assert not result.accepted and "axioms" in result.message
    assert (await Checker().check(problem, problem.reference)).accepted


@needs_shared
def test_lean_and_isabelle_load_but_are_refused_in_one_line() -> None:
    """No sorry/axiom check for them could be tested here, so they are refused even when on PATH."""
    lean = load_problems(ATP / "lean.json")
    isabelle = load_problems(ATP / "isabelle.json")
    assert len(lean) == len(isabelle) == 111
    assert lean[0].fill(lean[0].reference).rstrip().endswith("linarith")
    filled = isabelle[0].fill(isabelle[0].reference)
    assert "Fill Your Proof Here" not in filled and filled.rstrip().endswith("end")
    for path in ("lean.json", "isabelle.json"):
        with pytest.raises(UserError) as exc:
            AtpEnvironment.setup(TaskSource(dataset=ATP / path))
        assert "\n" not in str(exc.value) and "proofs are refused" in str(exc.value)
    proc = subprocess.run(
        [sys.executable, "-m", "agentbus.run", "--env", "atp", "--dataset", str(ATP / "lean.json")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert len(proc.stderr.strip().splitlines()) == 1 and "lean proofs are refused" in proc.stderr


@needs_shared
def test_coq_file_loads_with_markers_and_ids() -> None:
    problems = load_problems(ATP / "coq.json")
    assert len(problems) == 111 and problems[0].theorem == "chickens_and_rabbits"
    filled = problems[0].fill(problems[0].reference)
    assert "Fill in your proof here" not in filled and "lia" in filled


def test_generator_is_prefix_stable() -> None:
    assert generate(3, seed=4) == generate(9, seed=4)[:3]
