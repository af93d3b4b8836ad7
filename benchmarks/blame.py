"""Blame against injected mistakes (issue 49), on every environment and the gateway example.

For each setting (``agentbus.app.blame_inject``): a near-perfect agent (profile
``near``) is run cleanly; one mistake is injected at a random call of each
success (in rounds, until it makes the episode fail), and separately two.
``python -m agentbus.blame``'s
own code blames every failure of the all-default agent, repaired by ``fix``
(the same skills without the faults), with each decision rule in METHODS on
the same failures. Two mistakes come two ways: the decisive one and a later
one (the truth: the first), and a harmless one then a decisive one (the
truth: the second). Printed per setting and number of mistakes: step and
module accuracy of every method and of the rules that need no replay (step 0,
a random call, the earliest rolled mistake, a random rolled mistake), each
with its 95% Wilson interval, the replays per failure, and which methods fail
the bar the CI test applies (``agentbus.app.blame_truth.shortfalls``).

``--weak-module ROLE,...`` adds the other setting: every module near-perfect
but ROLE (the weak profile); the share of decisive verdicts naming ROLE, among
failures whose all-``fix`` episode succeeded.

    python benchmarks/blame.py                  # 40 tasks each, about 40 min on 2 cores
    python benchmarks/blame.py --tasks 12 --only tools
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentbus.app.blame import LOG, BlameOptions, load_records  # noqa: E402
from agentbus.app.blame_cmd import blame  # noqa: E402
from agentbus.app.blame_inject import (  # noqa: E402
    REPAIR,
    Injected,
    inject,
    run_with,
    weak_module_config,
)
from agentbus.app.blame_truth import (  # noqa: E402
    score,
    shortfalls,
    truth_lines,
    verdicts_of,
    wilson,
)
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
#: decision rules compared on the same failures: (name, how BlameOptions differs)
METHODS: dict[str, dict[str, Any]] = {
    "blame": {},
    "old rule": {"placebo": "redraw"},
    "first flip": {"placebos": 0},
}
#: methods and rules whose shortfalls are printed
JUDGED = (
    "blame",
    "old rule",
    "first flip",
    "step 0",
    "random call",
    "random mistake",
    "earliest mistake",
)


def settings(tasks: int) -> dict[str, list[str]]:
    out = {env: ["--env", env, "--tasks", str(tasks), "--slots", "planning"] for env in ENVS}
    out["plain-openai"] = [*GATEWAY, "--limit", str(tasks)]
    return out


def blamed(run_dir: Path, method: dict[str, Any]) -> tuple[list[dict[str, Any]], float]:
    """One method's verdicts on every failure of ``run_dir`` and the CPU seconds they took."""
    options = replace(BlameOptions(run_dir), **method)
    started = time.process_time()
    anyio.run(blame, options, io.StringIO())
    setting = options.setting(REPAIR)
    lines = (run_dir / LOG).read_bytes().splitlines()
    entries = [e for e in map(orjson.loads, lines) if e.get("setting") == setting]
    return entries, time.process_time() - started


def judged(name: str, label: str, inj: Injected) -> dict[str, Any] | None:
    """Blame ``inj``'s failures with every method; print the truth table; return the score."""
    runs = {m: blamed(inj.run_dir, opts) for m, opts in METHODS.items()}
    entries, cpu = runs["blame"]
    others = {m: verdicts_of(e) for m, (e, _) in runs.items() if m != "blame"}
    scored = score(entries, inj.truth, others=others)
    cost = ", ".join(
        f"{m} {sum(int(e.get('replays', 0)) for e in es) / max(1, len(es)):.1f}"
        for m, (es, _) in runs.items()
    )
    print(
        f"-- {name}, {label}: {len(entries)} failures blamed; replays per failure: {cost}; "
        f"blame {cpu:.1f} s CPU",
        flush=True,
    )
    print("\n".join(truth_lines(scored)) or "  (no failure with a known truth)", flush=True)
    return scored


def injected(name: str, args: list[str], root: Path, rounds: int) -> None:
    runs = inject(root / name, args, rounds=rounds)
    kinds = {"one": runs.one, "two, decisive first": runs.after}
    if runs.two is not None:
        kinds["two, harmless first"] = runs.two
    scored = {label: judged(name, label, inj) for label, inj in kinds.items()}
    one = scored["one"]
    for label, two in scored.items():
        if label == "one" or one is None or two is None:
            continue
        for method in JUDGED:
            missing = shortfalls(one, two, method)
            verdict = "passes" if not missing else "fails: " + "; ".join(missing)
            print(f"  bar (one and {label}): {method} {verdict}", flush=True)


def weak_module(role: str, tasks: int, root: Path, env: str) -> None:
    run_dir = root / f"weak-{env}-{role}"
    config = weak_module_config(root / f"weak-{env}-{role}.toml", role)
    run_with(
        run_dir, config, ["--env", env, "--tasks", str(tasks), "--slots", role], "sim:nearweak"
    )
    solved = {r.task_id for r in load_records(run_dir) if r.coalition and r.outcome.success}
    for method, opts in METHODS.items():
        entries, _ = blamed(run_dir, opts)
        decisive = [e for e in entries if e["status"] == "decisive" and e["task_id"] in solved]
        hits = sum(e["slot"] == role for e in decisive)
        lo, hi = wilson(hits, len(decisive))
        replays = sum(int(e.get("replays", 0)) for e in entries)
        print(
            f"-- weak {role} on {env} ({method}; others near-perfect, repair {REPAIR}): "
            f"{len(entries)} failures, {len(decisive)} decisive where the all-fix agent solves "
            f"the task; {role} named in {hits} ({100 * hits / max(1, len(decisive)):.0f}%, "
            f"95% [{100 * lo:.0f}, {100 * hi:.0f}]%); {replays / max(1, len(entries)):.1f} "
            "replays per failure",
            flush=True,
        )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=40, help="tasks per setting")
    p.add_argument("--rounds", type=int, default=5, help="injection rounds per run")
    p.add_argument("--only", help="these settings (environments or plain-openai), comma-separated")
    p.add_argument("--weak-module", help="also the one-weak-module setting for these roles")
    p.add_argument("--weak-env", default="math", help="environment of --weak-module")
    ns = p.parse_args()
    chosen = settings(ns.tasks)
    if ns.only is not None:
        chosen = {name: chosen[name] for name in ns.only.split(",") if name}
    with tempfile.TemporaryDirectory(prefix="blame-bench-") as tmp:
        for name, args in chosen.items():
            try:
                injected(name, args, Path(tmp), ns.rounds)
            except UserError as exc:  # one setting's run failed: say so, go on
                print(f"-- {name}: {exc}", flush=True)
        for role in (ns.weak_module or "").split(","):
            if role:
                weak_module(role, ns.tasks, Path(tmp), ns.weak_env)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
