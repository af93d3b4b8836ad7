"""Blame against injected mistakes (issue 49), on every environment and the gateway example.

For each setting (``agentbus.app.blame_inject``): a near-perfect agent (profile
``near``) is run cleanly, one mistake is injected at a random call of each
success (up to three rounds, until the mistake makes the episode fail), and
separately two; ``python -m agentbus.blame``'s own code then blames every
failure of the all-default agent, repaired by ``fix`` (the same skills without
the faults). Printed per setting and number of mistakes: step and module
accuracy of blame and of four rules that need no replay (step 0, a random
call, the earliest rolled mistake, a random rolled mistake), each with its
95% Wilson interval, and the replays per failure.

``--weak-module ROLE`` adds the other setting: every module near-perfect but
ROLE (the weak profile); the share of decisive verdicts naming ROLE, among
failures whose all-``fix`` episode succeeded.

    python benchmarks/blame.py                  # 30 tasks each, long on 2 cores
    python benchmarks/blame.py --tasks 12 --only tools
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

import anyio
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentbus.app.blame import LOG, BlameOptions, load_records  # noqa: E402
from agentbus.app.blame_cmd import blame  # noqa: E402
from agentbus.app.blame_inject import (  # noqa: E402
    REPAIR,
    inject,
    run_with,
    weak_module_config,
)
from agentbus.app.blame_truth import score, truth_lines, wilson  # noqa: E402
from agentbus.core.errors import UserError  # noqa: E402

ENVS = ("math", "ticket", "navigation", "shopping", "tools", "robot", "git", "os", "atp")
GATEWAY = [
    "--agent",
    "examples.plain_openai.agent:run",
    "--dataset",
    "examples/plain_openai/tasks.jsonl",
    "--slots",
    "planner,solver,critic",
    # the near-perfect agent solves every task in every coalition: that is the point here
    "--keep-going",
]


def settings(tasks: int) -> dict[str, list[str]]:
    out = {env: ["--env", env, "--tasks", str(tasks), "--slots", "planning"] for env in ENVS}
    out["plain-openai"] = [*GATEWAY, "--limit", str(tasks)]
    return out


def injected(name: str, args: list[str], root: Path) -> None:
    one, two = inject(root / name, args)
    for label, inj in (("one mistake", one), ("two mistakes", two)):
        started = time.process_time()
        anyio.run(blame, BlameOptions(inj.run_dir), io.StringIO())
        entries = [orjson.loads(x) for x in (inj.run_dir / LOG).read_bytes().splitlines()]
        replays = sum(int(e.get("replays", 0)) for e in entries)
        print(
            f"-- {name}, {label}: {len(entries)} failures blamed, "
            f"{replays / max(1, len(entries)):.1f} replays each, "
            f"{time.process_time() - started:.1f} s CPU",
            flush=True,
        )
        print("\n".join(truth_lines(score(entries, inj.truth))) or "  (no failure)", flush=True)


def weak_module(role: str, tasks: int, root: Path) -> None:
    run_dir = root / f"weak-{role}"
    config = weak_module_config(root / f"weak-{role}.toml", role)
    args = ["--env", "math", "--tasks", str(tasks), "--slots", role, "--default", "sim:nearweak"]
    run_with(run_dir, config, [*args[:-2]], default="sim:nearweak")
    anyio.run(blame, BlameOptions(run_dir), io.StringIO())
    solved = {r.task_id for r in load_records(run_dir) if r.coalition and r.outcome.success}
    entries = [orjson.loads(x) for x in (run_dir / LOG).read_bytes().splitlines()]
    decisive = [e for e in entries if e["status"] == "decisive" and e["task_id"] in solved]
    hits = sum(e["slot"] == role for e in decisive)
    lo, hi = wilson(hits, len(decisive))
    print(
        f"-- weak {role} (others near-perfect, repair {REPAIR}): {len(entries)} failures, "
        f"{len(decisive)} decisive where the all-fix agent solves the task; {role} named in "
        f"{hits} ({100 * hits / max(1, len(decisive)):.0f}%, 95% [{100 * lo:.0f}, {100 * hi:.0f}]%)"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=30, help="tasks per setting")
    p.add_argument("--only", help="one setting (an environment or plain-openai)")
    p.add_argument("--weak-module", help="also the one-weak-module setting for this role")
    ns = p.parse_args()
    chosen = settings(ns.tasks)
    if ns.only:
        chosen = {ns.only: chosen[ns.only]}
    with tempfile.TemporaryDirectory(prefix="blame-bench-") as tmp:
        for name, args in chosen.items():
            try:
                injected(name, args, Path(tmp))
            except UserError as exc:  # one setting's run failed: say so, go on
                print(f"-- {name}: {exc}", flush=True)
        if ns.weak_module:
            weak_module(ns.weak_module, ns.tasks, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
