"""A framework agent three ways, side by side: default workers, a process per episode, in process.

The smolagents example (``examples/smolagents/agent.py``: a manager
``ToolCallingAgent`` with a managed solver agent and a calculator tool) on
the simulator, the same tasks and seed in every arm:

* **workers (default)**: ``--agent-cmd "python agent.py"`` with no flag: the
  agent answers the worker handshake (gateway/auto_workers.py), so
  long-lived workers serve the episodes and smolagents is imported once
  per worker (up to 4 per CPU, started one at a time while episodes wait);
* **workers (1 per CPU)**: the same with ``--agent-processes`` the CPUs (fewer
  imports, fewer episodes at once);
* **process per episode**: the same command with ``--no-agent-workers``;
* **in process**: ``--agent agent:run``.

Each arm is one ``python -m agentbus.run``; its CPU time is the run's and
all its children's (agentbus, the simulator, every agent process), from
``getrusage(RUSAGE_CHILDREN)``, and its wall time is the run's. The command
arms run with ``--agent-isolation none``: bubblewrap's monitor exits without
reaping its namespace's init, so a sandboxed agent's CPU time never reaches
the parent's count (the sandbox's own cost is ``gateway.py --commands``).
The arms run one after another, in the order given, at the simulator's
default speed (``--sim-speed`` to change it). Then every episode's reward
and answer in the default-workers arm is compared with the same episode's
in the process-per-episode arm: a worker serves many episodes, and one
that carried an answer from one to the next would show here.
Target (issue 50): command agents within 1.5x of in process.

    python benchmarks/agent_workers.py            # 8 tasks x 4 coalitions per arm
    python benchmarks/agent_workers.py --quick    # 1 task
    python benchmarks/agent_workers.py --repeats 3 --arms "workers (default),in process"

``--repeats N`` runs N rounds, each in a rotated order (the shared machine's
load drifts between arms), and compares the arms' medians.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from agentbus.core.events import EPISODE_ENDED

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "smolagents"
COMMAND = ["--agent-cmd", f"{sys.executable} agent.py", "--agent-isolation", "none"]
CPUS = len(os.sched_getaffinity(0))
ARMS: dict[str, list[str]] = {
    "workers (default)": COMMAND,
    "workers (1 per CPU)": [*COMMAND, "--agent-processes", str(CPUS)],
    "process per episode": [*COMMAND, "--no-agent-workers"],
    "in process": ["--agent", "agent:run"],
}

Key = tuple[str, tuple[str, ...], str, int]


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def arm(
    name: str, tasks: int, speed: float, scratch: Path
) -> tuple[float, float, dict[Key, tuple[float, Any]], str]:
    """(CPU seconds, wall seconds, each episode's reward and answer, console lines) of one run."""
    run_dir = scratch / "".join(c for c in name if c.isalnum())
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before, started = cpu_of_children(), time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable, "-m", "agentbus.run", *ARMS[name], "--dataset", "tasks.jsonl",
            "--limit", str(tasks), "--slots", "manager,solver", "--sim-speed", str(speed),
            "--no-plots", "--progress", "off", "--run-dir", str(run_dir), "--no-preflight",
            "--keep-going",
        ],
        cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - started, cpu_of_children() - before
    if proc.returncode != 0:
        raise SystemExit(f"{name}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    episodes: dict[Key, tuple[float, Any]] = {}
    for line in (run_dir / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event.get("type") != EPISODE_ENDED:
            continue
        details = event["outcome"].get("details", {})
        if details.get("agent_error"):
            raise SystemExit(f"{name}: {details['agent_error']}")
        key = (event["test_model"], tuple(event["coalition"]), event["task_id"], event["repeat"])
        episodes[key] = (event["outcome"]["reward"], (details.get("result") or {}).get("answer"))
    notes = [ln for ln in proc.stderr.splitlines() if "handshake" in ln]
    return cpu, wall, episodes, "; ".join(notes)


def differences(a: dict[Key, Any], b: dict[Key, Any]) -> list[str]:
    """Episodes whose reward or answer differs between two arms (or that one lacks)."""
    return [
        f"{k[1] or '(all default)'} {k[2]}: {a.get(k)} vs {b.get(k)}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one task per arm")
    parser.add_argument("--tasks", type=int, default=8, help="tasks per arm (8)")
    parser.add_argument("--sim-speed", type=float, default=6.0, help="the simulator's (6)")
    parser.add_argument("--repeats", type=int, default=1, help="rounds of all arms (1)")
    parser.add_argument(
        "--arms", default=",".join(ARMS), help="comma-separated, of: " + ", ".join(ARMS)
    )
    args = parser.parse_args()
    arms = [a.strip() for a in args.arms.split(",")]
    if "in process" not in arms or set(arms) - set(ARMS):
        raise SystemExit(f"--arms: some of {', '.join(ARMS)}, 'in process' among them")
    if importlib.util.find_spec("smolagents") is None:
        raise SystemExit("smolagents is not installed: pip install -e '.[examples]'")
    tasks = 1 if args.quick else args.tasks
    load = os.getloadavg()[0]
    print(
        f"smolagents example, {tasks} tasks x 4 coalitions per arm, sim speed {args.sim_speed:g}; "
        f"load average {load:.1f} on {CPUS} cores"
    )
    cpus: dict[str, list[float]] = {name: [] for name in arms}
    walls: dict[str, list[float]] = {name: [] for name in arms}
    results: dict[str, dict[Key, Any]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for turn in range(args.repeats):  # each round in another order: the load drifts
            for name in arms[turn % len(arms) :] + arms[: turn % len(arms)]:
                cpu_s, wall_s, results[name], note = arm(
                    name, tasks, args.sim_speed, Path(scratch) / str(turn)
                )
                n = len(results[name])
                cpus[name].append(cpu_s / n)
                walls[name].append(wall_s)
                print(
                    f"{name:>20}: {n} episodes, {cpu_s:.1f} CPU-s ({cpu_s / n:.3f} per "
                    f"episode), {wall_s:.1f} s wall, load {os.getloadavg()[0]:.1f}"
                    + (f"  [{note}]" if note and turn == 0 else "")
                )
    cpu = {name: statistics.median(v) for name, v in cpus.items()}
    wall = {name: statistics.median(v) for name, v in walls.items()}
    base = "in process"
    for name in arms:
        if name != base:
            print(
                f"{name} / in process: {cpu[name] / cpu[base]:.2f}x CPU per episode, "
                f"{wall[name] / wall[base]:.2f}x wall (medians of {args.repeats}; target <= 1.5x)"
            )
    one = "process per episode" if "process per episode" in arms else base
    for name in arms:
        if name.startswith("workers"):
            diff = differences(results[name], results[one])
            print(
                f"reward and answer, {name} vs {one}: {len(results[name]) - len(diff)} of "
                f"{len(results[name])} episodes the same"
                + "".join(f"\n  differs: {d}" for d in diff[:10])
            )
    rewards = {
        name: sum(r for r, _ in episodes.values()) / len(episodes)
        for name, episodes in results.items()
    }
    print("mean reward: " + ", ".join(f"{name} {v:.3f}" for name, v in rewards.items()))


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    main()
