"""OS verdicts come from the check's own channel: its stdout and exit status, never stderr.

The rule (environments/os/README.md): a non-zero exit fails; otherwise the
last non-empty stdout line decides when it is ``0`` or ``1``; a check that
prints neither passes on exit 0. With stderr merged into the judged output,
a CapaBench-style check (``grep -q ... file && echo 0 || echo 1``) whose
file the agent never made printed an error line before its ``1`` and passed
(issue 38).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentbus import ActionProposed
from environments.os.env import OsEnvironment
from environments.os.judge import judge, prepare
from environments.os.loader import load_path
from environments.os.script import Script
from environments.os.task import OsTask
from environments.sandbox import Sandbox, SandboxLimits
from environments.sandbox import persistent_unavailable as unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

SHARED = Path(__file__).resolve().parents[4] / "shared" / "capabench" / "os"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"no shared data at {SHARED}")
LIMITS = SandboxLimits(timeout_s=5, cpu_s=5, memory_mb=256, nproc=32, disk_mb=8)

#: (check, passes?): the rule, case by case
RULE = [
    ("grep -q x /root/never-made && echo 0 || echo 1", False),  # the case
    ("cat /root/never-made; echo 1", False),
    ("echo 0 >&2; echo 1", False),  # a 0 on stderr is not read
    ("echo 1 >&2; echo 0", True),  # nor is a 1
    ("echo 1 >&2", True),  # prints neither on stdout, exit 0
    ("echo 1; echo 0", True),  # the last line decides
    ("echo 0; echo 1", False),
    ("printf '1\\n\\n   \\n'", False),  # the last non-empty line
    ("echo 0; exit 3", False),  # a non-zero exit fails whatever was printed
    ("echo hello", True),
    ("true", True),
    ("false", False),
    ("yes 0 | head -c 100000; echo 1", False),  # a long stdout: its end is kept
]


async def test_only_stdout_and_the_exit_status_decide() -> None:
    async with Sandbox(LIMITS) as box:
        got = []
        for check, _ in RULE:
            task = OsTask(id="rule", description="rule", check=(Script("bash", check),))
            got.append((check, (await judge(task, box, None)).passed))
        assert got == RULE
        # stderr is kept apart (for the transcript), the agent's commands still merge it
        r = await box.run("grep -q x /root/never-made", check=True)
        assert r.output == "" and "No such file" in r.stderr
        task = OsTask(id="rule", description="rule", check=(Script("bash", RULE[0][0]),))
        assert "No such file" in (await judge(task, box, None)).stderr
        r = await box.run("echo out; echo err >&2")
        assert r.output == "out\nerr\n" and r.stderr == ""


@needs_shared
@pytest.mark.parametrize("number", [1, 2, 3, 4])
async def test_capabench_no_op_agent_fails_and_the_example_passes(number: int) -> None:
    """An agent that runs no command fails every CapaBench OS task (none is true of a fresh
    system); the example solution passes. Task 4's check also fails once the file it reads
    is missing (the repro of issue 38: with stderr judged it passed)."""
    (task,) = load_path(SHARED / f"task{number}.json")
    assert task.example is not None
    env = OsEnvironment()  # the whole episode: reset (init scripts), then `finish` at once
    try:
        await env.reset(task.to_task())
        end = await env.step(ActionProposed(text="finish"))
        assert end.done and end.success is False and env.commands == 0
        assert not (await env.score()).success
    finally:
        await env.close()
    async with Sandbox(LIMITS) as box:
        assert await prepare(task, box) == []
        assert not (await judge(task, box, None)).passed
        if number == 4:
            await box.run("rm -f ~/kernel_version.txt")
            assert not (await judge(task, box, None)).passed
        assert (await box.run(task.example.code)).ok
        assert (await judge(task, box, None)).passed
