"""Bounded memory: a sandbox's cgroup holds its hogs, and the run's budget caps live sandboxes."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from environments.sandbox import Sandbox, SandboxLimits, budget, cgroup
from environments.sandbox import persistent_unavailable as unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

LIMITS = SandboxLimits(timeout_s=8, cpu_s=8, memory_mb=1024, nproc=32, disk_mb=32)


@pytest.mark.skipif(cgroup.root() is None, reason="no memory cgroup can be made here")
async def test_a_hostile_sandbox_stays_inside_its_cgroup() -> None:
    limits = SandboxLimits(**{**LIMITS.__dict__, "memory_budget_mb": 96})
    async with Sandbox(limits) as box:
        assert box.cgroup is not None
        hogs = (
            "for d in /tmp /root /var /home /opt /srv; do head -c 12M /dev/zero > $d/f; done; "
            "python3 -c 'x = bytearray(600 << 20)'; echo rc=$?"
        )
        r = await box.run(hogs)
        # the group's OOM killer ended the hog (or the command's shell with it), not a timeout
        assert ("rc=137" in r.output or r.exit_code == 137) and not r.timed_out
        peak = cgroup.root()
        assert peak is not None
        group_peak = int(
            (
                box.cgroup / ("memory.peak" if peak.version == 2 else "memory.max_usage_in_bytes")
            ).read_text()
        )
        assert group_peak <= 96 << 20
        r = await box.run("echo alive")  # the init survived: its commands die first
        assert r.output == "alive\n"
        group = box.cgroup
    assert not group.exists()  # removed with the sandbox


async def test_the_run_budget_caps_how_many_sandboxes_live_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(budget.ENV_VAR, "100")
    limits = SandboxLimits(**{**LIMITS.__dict__, "memory_budget_mb": 40})
    live = 0
    most = 0

    async def one() -> None:
        nonlocal live, most
        async with Sandbox(limits) as box:
            live += 1
            most = max(most, live)
            await box.run("sleep 0.2")
            live -= 1

    await asyncio.gather(*(one() for _ in range(6)))
    assert most == 2  # 100 MiB // 40 MiB
    assert budget.gate().used == 0


def test_budget_arithmetic_and_the_bound_without_cgroups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(budget.ENV_VAR, "1000")
    assert budget.slots(256) == 3 and budget.slots(5000) == 1
    # 64 processes x 1 GiB + 9 tmpfs x 24 MiB + one 16 MiB memfd
    assert SandboxLimits().worst_case_mb() == 64 * 1024 + 9 * 24 + 16
    # with a cgroup: every tmpfs full still leaves the init room in the default budget
    limits = SandboxLimits()
    assert 9 * limits.disk_mb + 32 <= limits.memory_budget_mb


async def test_waiting_for_the_budget_is_kept_off_the_episodes_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentbus.llm.queueing import start_clock, stop_clock

    monkeypatch.setenv(budget.ENV_VAR, "40")
    limits = SandboxLimits(**{**LIMITS.__dict__, "memory_budget_mb": 40})
    async with Sandbox(limits) as first:

        async def second() -> float:
            clock, token = start_clock()  # what an episode has
            try:
                async with Sandbox(limits):
                    return clock.waited_s
            finally:
                stop_clock(token)

        waiting = asyncio.ensure_future(second())
        await asyncio.sleep(0.5)  # the second sandbox waits for the first's share
        assert not waiting.done()
        await first.run("true")
    assert await waiting >= 0.4  # counted as queueing, so the deadline moved out


def test_a_refused_move_into_the_group_still_starts_the_command(tmp_path: Path) -> None:
    argv = cgroup.enter_argv(tmp_path / "no-such-group", ["sh", "-c", "echo started"])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    assert done.returncode == 0 and done.stdout == "started\n" and done.stderr == ""
