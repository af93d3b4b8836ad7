"""Escape attempts against the real bubblewrap sandbox: each fails inside, as output.

Nothing here may crash the run or touch the host; after the sandbox closes,
no process is left in its PID namespace and the host's mount table is as
it was.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from environments.sandbox import Sandbox, SandboxLimits, run_once
from environments.sandbox import persistent_unavailable as unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

LIMITS = SandboxLimits(timeout_s=4, cpu_s=4, memory_mb=256, nproc=32, disk_mb=8)


def _pid_namespace(pid: int) -> str | None:
    """The PID namespace of bwrap's child (the sandbox's init)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in status:
            try:
                return os.readlink(entry / "ns" / "pid")
            except OSError:
                return None
    return None


def _mounts() -> str:
    return Path("/proc/self/mountinfo").read_text()


def _exists(path: str | Path) -> bool:
    return Path(path).exists()


def _alive_in(namespace: str) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                count += os.readlink(entry / "ns" / "pid") == namespace
            except OSError:
                pass
    return count


async def test_escape_attempts_fail_inside_and_leave_nothing(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    mounts_before = _mounts()
    box = Sandbox(LIMITS)
    await box.start()
    assert box.pid is not None
    namespace = _pid_namespace(box.pid)
    assert namespace is not None and namespace != os.readlink("/proc/self/ns/pid")

    # writing outside the sandbox root: the host path does not exist inside, / is read-only
    r = await box.run(f"mkdir -p {tmp_path} && echo owned > {canary}; touch /usr/owned /owned")
    assert not _exists(canary) and not _exists("/usr/owned")
    assert "Read-only file system" in r.output

    # the host's home and shadow file are not there (a private /etc has its own)
    home = Path.home()
    r = await box.run(f"ls {home}/ /home/; cat /etc/shadow")
    assert "root:*:" in r.output  # the sandbox's own shadow file, not the host's
    if home.exists() and any(home.iterdir()):
        first = next(home.iterdir()).name
        assert first not in r.output.replace(str(home), "")

    # no network: a socket cannot connect
    r = await box.run("exec 3<>/dev/tcp/1.1.1.1/80 && echo CONNECTED")
    assert r.exit_code != 0 and "CONNECTED" not in r.output
    r = await box.run("python3 -c 'import socket; socket.create_connection((\"10.0.0.1\", 80), 2)'")
    assert r.exit_code != 0 and ("unreachable" in r.output or "Error" in r.output)

    # an infinite loop is killed at the wall-clock limit
    r = await box.run("while :; do :; done")
    assert r.timed_out and "time limit" in r.shown()

    # a memory hog hits the address-space limit
    r = await box.run("python3 -c 'x = bytearray(1 << 30)'")
    assert r.exit_code != 0 and "MemoryError" in r.output

    # filling the disk stops at the tmpfs size / file-size limit
    r = await box.run("dd if=/dev/zero of=/root/fill bs=1M count=64; df -k /root | tail -1")
    assert "No space left" in r.output or "File size limit" in r.output

    # a fork bomb is contained, and the sandbox still answers afterwards
    await box.run(":(){ :|:& };:")
    r = await box.run("echo still-here")
    if "still-here" not in r.output:  # a bomb still growing when that command came: once more
        r = await box.run("echo still-here")
    assert "still-here" in r.output

    # kill -9 -1 kills the commands, not the sandbox
    await box.run("sleep 100 &")
    r = await box.run("kill -9 -1; echo after")
    r = await box.run("echo alive; ps -e | wc -l")
    assert "alive" in r.output

    await box.close()
    for _ in range(50):  # the kernel tears the namespace down asynchronously
        if _alive_in(namespace) == 0:
            break
        await anyio.sleep(0.1)
    assert _alive_in(namespace) == 0
    assert _mounts() == mounts_before
    assert not _exists(canary)


async def test_state_carries_over_and_checks_run_independently() -> None:
    async with Sandbox(LIMITS) as box:
        await box.run("cd /tmp; export COLOR=blue; sleep 60 &")
        r = await box.run("pwd; echo $COLOR; pgrep -c sleep")
        assert r.output.split() == ["/tmp", "blue", "1"]
        r = await box.run('pwd; echo "[$COLOR] $1"', ["arg"], independent=True)
        assert r.output.split() == ["/root", "[]", "arg"]


async def test_output_is_cut_and_environment_is_clean() -> None:
    os.environ["AGENTBUS_SECRET_PROBE"] = "do-not-leak"
    try:
        async with Sandbox(LIMITS) as box:
            r = await box.run("env; seq 1 100000")
        assert "do-not-leak" not in r.output
        assert r.truncated and len(r.output) <= LIMITS.output_bytes
        assert r.shown(800).endswith("[truncated because the output is too long]")
    finally:
        del os.environ["AGENTBUS_SECRET_PROBE"]


async def test_one_shot_run_times_out_and_reads_stdin() -> None:
    r = await run_once("cat; exit 3", "hello", LIMITS)
    assert r.exit_code == 3 and r.output == "hello"
    r = await run_once("sleep 30", "", SandboxLimits(timeout_s=1))
    assert r.timed_out


async def test_exited_orphans_do_not_count_as_leftovers() -> None:
    # 20 live background processes + 20 exited orphans: over half the process budget only
    # if the zombies were counted, which would kill the live ones as a "fork bomb"
    async with Sandbox(SandboxLimits()) as box:
        await box.run("for i in $(seq 20); do sleep 100 & done")
        await box.run("for i in $(seq 20); do (sleep 0.1 &); done; sleep 0.5")
        r = await box.run("pgrep -c sleep")
        assert r.output.split() == ["20"]
