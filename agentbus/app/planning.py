"""``python -m agentbus.plan``: tasks and episodes a target half-width needs, from a pilot.

Reads a pilot run directory (its ``events.jsonl``), or runs a small pilot
first (``--pilot N -- RUN FLAGS``: ``python -m agentbus.run`` with those
flags on N tasks), and prints per test model and slot the tasks and episodes
for ``--target`` (and for telling the top slot from the second), from the
spread of the per-task values (:mod:`attribution.power`).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from agentbus.app.cli_args import OneLineParser
from agentbus.core.errors import UserError
from attribution.collect import collect_from_log
from attribution.estimators import CHOICES, Estimator
from attribution.power import format_plan, pilot_values, plan


def parser() -> OneLineParser:
    p = OneLineParser(prog="python -m agentbus.plan", description=__doc__.split("\n")[0])
    p.add_argument("run_dir", nargs="?", type=Path, help="a pilot run directory")
    p.add_argument("--target", type=float, default=0.05, help="95%% half-width (default 0.05)")
    p.add_argument(
        "--estimator", choices=CHOICES, help="plan for this estimator (default: the run's)"
    )
    p.add_argument("--pilot", type=int, metavar="N", help="run a pilot of N tasks first")
    p.epilog = "with --pilot, the flags after -- go to python -m agentbus.run"
    return p


def run_pilot(tasks: int, flags: list[str], run_dir: Path) -> None:
    """``python -m agentbus.run FLAGS --tasks N`` into ``run_dir`` (its errors are ours).

    A task file's run takes ``--limit`` alone: ``--tasks`` beside ``--dataset`` is
    refused as having no effect (app/flag_scope.py).
    """
    from_file = any(f == "--dataset" or f.startswith("--dataset=") for f in flags)
    count = [] if from_file else ["--tasks", str(tasks)]
    cmd = [sys.executable, "-m", "agentbus.run", *flags, *count, "--limit", str(tasks)]
    cmd += ["--run-dir", str(run_dir), "--progress", "off", "--no-plots"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UserError(f"the pilot run failed: {last}")


def run_estimator(run_dir: Path) -> str:
    try:
        manifest = orjson.loads((run_dir / "manifest.json").read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return "auto"
    config = manifest.get("config") if isinstance(manifest, dict) else None
    return str((config or {}).get("estimator") or "auto")


def plan_lines(run_dir: Path, target: float, estimator: str | None) -> list[str]:
    log = run_dir / "events.jsonl"
    if not log.is_file():
        raise UserError(f"no pilot run in {run_dir} (no events.jsonl)")
    collector = collect_from_log(log)
    if not collector.games:
        raise UserError(f"{log} holds no coalition episodes")
    name = estimator or run_estimator(run_dir)
    lines: list[str] = []
    for model, game in sorted(collector.games.items()):
        est = Estimator.make(name, game.n)
        phi_t = pilot_values(game, est)
        if len(phi_t) < 2:
            raise UserError(
                f"{model}: the pilot has {len(phi_t)} complete task(s) for {est.name}; "
                "a plan needs 2 or more (run a longer pilot, or plan for the run's estimator)"
            )
        lines += format_plan(plan(phi_t, game.slots, target, est), model)
    return lines


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    flags: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, flags = args[:cut], args[cut + 1 :]
    ns = parser().parse_args(args)
    try:
        if not 0 < ns.target < 1:
            raise UserError(f"--target must be between 0 and 1, got {ns.target}")
        if ns.pilot is not None:
            if ns.pilot < 2:
                raise UserError("--pilot needs at least 2 tasks")
            run_dir = ns.run_dir or Path(tempfile.mkdtemp(prefix="agentbus-pilot-"))
            run_pilot(ns.pilot, flags, run_dir)
            print(f"pilot: {ns.pilot} tasks in {run_dir}")
        elif ns.run_dir is None:
            raise UserError("give a pilot run directory, or --pilot N -- RUN FLAGS")
        else:
            run_dir = ns.run_dir
        for line in plan_lines(run_dir, ns.target, ns.estimator):
            print(line)
    except UserError as exc:
        print(f"agentbus.plan: error: {exc}", file=sys.stderr)
        return 2
    return 0
