"""Blame accuracy against the simulator's own mistakes (issue 43), full size.

For each setting it runs a coalition evaluation on the simulator, then
``python -m agentbus.blame`` on every failure of the all-default agent, and
prints per setting:

* failures blamed, how many reproduced from the run's cache (replayable);
* found: failures with a decisive single call; none: failures no single
  repaired call flips;
* accuracy: decisive steps that are calls where the simulator rolled a
  mistake (wrong or malformed), of those whose roll is known; false blame:
  the rest;
* replays per failure (the reproduction included) and single-call probes;

each with ``--placebo 0`` (the first flip counts) and ``--placebo 4`` (the
default: a flip must beat four resampled answers of the slot's own model).

Settings: math (the default run: 30 tasks, four slots), git (30 tasks, four
slots) and the plain-openai gateway example (60 tasks; a step is one gateway
call). ``--quick`` shrinks each to a few tasks. Runs at --sim-speed 0.

    python benchmarks/blame.py            # about 3-4 minutes on 2 cores
    python benchmarks/blame.py --quick
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent

SETTINGS: dict[str, list[str]] = {
    "math": ["--env", "math", "--tasks", "30"],
    "git": ["--env", "git", "--tasks", "30"],
    "plain-openai": [
        "--agent",
        "examples.plain_openai.agent:run",
        "--dataset",
        "examples/plain_openai/tasks.jsonl",
        "--slots",
        "planner,solver,critic",
    ],
}
#: the blame command's --placebo settings compared on each run (4 is its default)
PLACEBOS = (0, 4)

QUICK = {"math": ["--tasks", "8"], "git": ["--tasks", "8"], "plain-openai": ["--limit", "12"]}


def run(name: str, quick: bool, root: Path) -> list[dict[str, object]]:
    run_dir = root / name
    argv = [sys.executable, "-m", "agentbus.run", *SETTINGS[name], *(QUICK[name] if quick else [])]
    argv += ["--run-dir", str(run_dir), "--sim-speed", "0", "--no-plots", "--progress", "off"]
    made = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if made.returncode != 0:
        raise SystemExit(f"{name}: the run failed:\n{made.stderr[-2000:]}")
    out: list[dict[str, object]] = []
    for placebo in PLACEBOS:
        started = time.perf_counter()
        blamed = subprocess.run(
            [sys.executable, "-m", "agentbus.blame", str(run_dir), "--placebo", str(placebo)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if blamed.returncode != 0:
            raise SystemExit(f"{name}: blame failed:\n{blamed.stderr[-2000:]}")
        wall = time.perf_counter() - started
        summary = orjson.loads((run_dir / "blame.json").read_bytes())
        out.append({"summary": summary, "wall_s": wall, "table": blamed.stdout, "placebo": placebo})
    return out


def pct(x: object) -> str:
    return "-" if x is None else f"{100 * float(x):.1f}%"  # type: ignore[arg-type]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a few tasks per setting")
    p.add_argument("--only", choices=sorted(SETTINGS), help="one setting")
    ns = p.parse_args()
    names = [ns.only] if ns.only else list(SETTINGS)
    header = (
        f"{'setting':<16} {'failed':>6} {'replay':>6} {'found':>6} {'none':>5} "
        f"{'accuracy':>12} {'false blame':>11} {'replays/f':>9} {'probes/f':>8} {'blame s':>7}"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="blame-bench-") as tmp:
        for name in names:
            for result in run(name, ns.quick, Path(tmp)):
                s = result["summary"]
                assert isinstance(s, dict)
                t = s.get("truth") or {}
                n = s["episodes"] or 1
                label = f"{name} p{result['placebo']}"
                rows.append(
                    f"{label:<16} {s['episodes']:>6} {s['replayable']:>6} {s['decisive']:>6} "
                    f"{len(s['none']):>5} "
                    f"{t.get('correct', 0):>3}/{t.get('judged', 0):<3} "
                    f"{pct(t.get('accuracy')):>5} {pct(t.get('false_blame')):>11} "
                    f"{s['replays'] / n:>9.1f} {s['probes'] / n:>8.1f} {result['wall_s']:>7.0f}"
                )
                print(f"-- {label}\n{result['table']}", flush=True)
    print(header)
    for row in rows:
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
