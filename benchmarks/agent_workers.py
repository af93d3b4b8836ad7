"""CPU-seconds per episode of one agent run three ways: per process, as a worker, in process.

The plain-openai example agent (``examples/plain_openai``: planner, solver,
critic through the ``openai`` SDK) on the simulator at speed 0, so the
figures are software: a process per episode (``--agent-cmd "python
agent.py"``), long-lived workers (``--agent-cmd "python worker.py"
--agent-workers``) and in agentbus's own process (``--agent agent:run``).
Each arm is one ``python -m agentbus.run`` on the same tasks; its CPU time
is the run's and all its children's (agentbus, the simulator, every agent
process), from ``getrusage(RUSAGE_CHILDREN)``. The command arms run with
``--agent-isolation none``: bubblewrap's monitor exits without reaping its
namespace's init, so a sandboxed agent's CPU time never reaches the
parent's count (the sandbox's own start is measured in ``gateway.py
--commands``).
Target (issue 41): worker mode within 1.5x of in process.

    python benchmarks/agent_workers.py            # 8 tasks x 8 coalitions per arm
    python benchmarks/agent_workers.py --quick    # 1 task
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from agentbus.core.events import EPISODE_ENDED

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "plain_openai"

ARMS = {
    "per process": ["--agent-cmd", f"{sys.executable} agent.py", "--agent-isolation", "none"],
    "worker": [
        "--agent-cmd",
        f"{sys.executable} worker.py",
        "--agent-workers",
        "--agent-isolation",
        "none",
    ],
    "in process": ["--agent", "agent:run"],
}


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def arm(name: str, tasks: int, scratch: Path) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, episodes) of one run of the arm."""
    run_dir = scratch / name.replace(" ", "-")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before, started = cpu_of_children(), time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable, "-m", "agentbus.run", *ARMS[name], "--dataset", "tasks.jsonl",
            "--limit", str(tasks), "--slots", "planner,solver,critic", "--sim-speed", "0",
            "--no-plots", "--progress", "off", "--run-dir", str(run_dir), "--no-preflight",
        ],
        cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - started, cpu_of_children() - before
    if proc.returncode != 0:
        raise SystemExit(f"{name}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    episodes = 0
    for line in (run_dir / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event.get("type") == EPISODE_ENDED:
            episodes += 1
            if event["outcome"].get("details", {}).get("agent_error"):
                raise SystemExit(f"{name}: {event['outcome']['details']['agent_error']}")
    return cpu, wall, episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one task per arm")
    args = parser.parse_args()
    tasks = 1 if args.quick else 8
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {tasks} tasks")
    figures = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in ARMS:
            cpu, wall, episodes = arm(name, tasks, Path(scratch))
            figures[name] = cpu / episodes
            print(
                f"{name:>11}: {episodes} episodes, {cpu:.1f} CPU-s ({cpu / episodes:.3f} "
                f"per episode), {wall:.1f} s wall"
            )
    ratio = figures["worker"] / figures["in process"]
    print(
        f"worker / in process: {ratio:.2f}x CPU per episode (target <= 1.5x); "
        f"per process / in process: {figures['per process'] / figures['in process']:.2f}x"
    )


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    main()
