"""A sandboxed agent past a limit is killed whole, and a worker's CPU limit is per episode.

bubblewrap starts the agent in a session of its own (``--new-session``), so
a kill of the process group agentbus launched reached bubblewrap but not
the agent: a sandboxed command past its time limit kept running (its
episode ended 30 s later, when agentbus stopped waiting for its pipes, and
the process ran on after the run). Now every process in the episode's
cgroup is killed (``Launch.kill``). A worker's CPU time is counted per
episode (from the episode's start), not over its life, where it would add
up to the limit in any long run.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import pytest

from agentbus.gateway.isolation import Isolation
from agentbus.gateway.runners import AgentFailed, CommandAgent
from agentbus.gateway.workers import WorkerAgent
from tests.helpers.agent_contexts import context
from tests.helpers.sandbox_marks import needs_bwrap

#: reads its task, then sleeps far past any limit
SLEEPER = "import json, sys, time\njson.load(sys.stdin)\ntime.sleep(600)\n"

#: a worker that burns the CPU seconds each task asks for
BURNER = r"""
import json, os, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    end = time.process_time() + msg["task"]["burn"]
    while time.process_time() < end:
        pass
    print(json.dumps({"answer": msg["task"]["id"], "pid": os.getpid()}), flush=True)
"""


def _running(name: str) -> list[str]:
    """Processes whose command line names ``name``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if name.encode() in cmdline and b"bwrap" not in cmdline:
            found.append(pid)
    return found


@needs_bwrap
async def test_a_sandboxed_command_past_its_time_limit_is_killed_whole(tmp_path: Path) -> None:
    name = f"sleeper_{uuid.uuid4().hex[:8]}.py"
    (tmp_path / name).write_text(SLEEPER)
    agent = CommandAgent(
        f"{sys.executable} {name}", cwd=tmp_path, time_limit_s=1, isolation=Isolation()
    )
    started = time.monotonic()
    try:
        with pytest.raises(AgentFailed, match="time limit of 1s; killed"):
            await agent.run({"id": "t1"}, context(1))
    finally:
        await agent.aclose()
    assert time.monotonic() - started < 15  # was 31 s: the wait for its pipes to close
    assert _running(name) == []  # was: still sleeping after the episode


@needs_bwrap
async def test_a_workers_cpu_time_is_limited_per_episode_not_over_its_life(tmp_path: Path) -> None:
    (tmp_path / "burn.py").write_text(BURNER)
    agent = WorkerAgent(
        f"{sys.executable} burn.py",
        cwd=tmp_path,
        max_processes=1,
        time_limit_s=30,
        isolation=Isolation(cpu_s=0.2),
    )
    try:
        # 2 x 0.12 s: more than the limit over the worker's life, each episode under it
        served = [await agent.run({"id": f"t{n}", "burn": 0.12}, context(n)) for n in range(2)]
        assert len({r["pid"] for r in served}) == 1
        with pytest.raises(AgentFailed, match=r"more than 0\.2s of CPU time together in one"):
            await agent.run({"id": "x", "burn": 5}, context(9))
        assert agent.idle == []  # killed, not kept
    finally:
        await agent.aclose()
