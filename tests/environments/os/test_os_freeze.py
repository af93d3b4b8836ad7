"""The agent's processes are stopped for good before a check (issue 38, item 3).

With a cgroup v2 container (``environments/sandbox/freezer.py``) the host
freezes every process of the agent's at once; no signal resumes a frozen
task. Before it, the init stopped them with ``SIGSTOP`` found by scanning
``/proc``, and a process whose POSIX timer sent it ``SIGCONT`` every 30 ms
ran on during checks: it killed the check's ``sleep`` (``! sleep 1`` passed
6 of 6 here) and flipped a file between two contradictory checks. Each
attack has a control: on the agent's side the same check is fooled.
"""

from __future__ import annotations

import os

import pytest

from environments.os.judge import judge
from environments.os.script import Script
from environments.os.task import OsTask
from environments.sandbox import Sandbox, SandboxLimits, freezer
from environments.sandbox import persistent_unavailable as unavailable

pytestmark = [
    pytest.mark.skipif(unavailable() is not None, reason=str(unavailable())),
    pytest.mark.skipif(not freezer.available(), reason="no cgroup v2 container here"),
]

LIMITS = SandboxLimits(timeout_s=10, cpu_s=10, memory_mb=512, nproc=32, disk_mb=8)

# Wakes itself with SIGCONT every 30 ms, calls itself "kworker", flips /root/flip, and
# on every turn forks a child (a new pid each time) that kills every `sleep` it finds.
WAKER = r"""
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
class Event(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int),
                ("notify", ctypes.c_int), ("pad", ctypes.c_byte * 48)]
class Spec(ctypes.Structure):
    _fields_ = [("interval", ctypes.c_long * 2), ("value", ctypes.c_long * 2)]
signal.signal(signal.SIGCONT, lambda *_: None)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
timer = ctypes.c_void_p()
libc.timer_create(1, ctypes.byref(Event(None, signal.SIGCONT, 0)), ctypes.byref(timer))
every = (ctypes.c_long * 2)(0, 30_000_000)
libc.timer_settime(timer, 0, ctypes.byref(Spec(every, every)), None)
libc.prctl(15, b"kworker", 0, 0, 0)  # PR_SET_NAME
while True:
    if os.fork() == 0:
        for p in os.listdir("/proc"):
            try:
                if open(f"/proc/{p}/comm").read() == "sleep\n":
                    os.kill(int(p), 9)
            except (OSError, ValueError):
                pass
        os._exit(0)
    try:
        os.remove("/root/flip")
    except FileNotFoundError:
        open("/root/flip", "w").close()
    time.sleep(0.002)
"""


def task(*checks: str) -> OsTask:
    return OsTask(
        id="freeze", description="impossible", check=tuple(Script("bash", c) for c in checks)
    )


async def test_a_self_waking_renamed_respawning_process_is_frozen_before_checks() -> None:
    async with Sandbox(LIMITS) as box:
        assert box.container is not None
        await box.run(f"cat > /tmp/w.py <<'EOF'\n{WAKER}\nEOF\n(python3 /tmp/w.py &)")
        # control: on the agent's side it kills the check's sleep
        assert (await box.run("! sleep 1", independent=True)).exit_code == 0
        assert not (await judge(task("! sleep 1"), box, None)).passed
        flip = "sleep 0.2; test -f /root/flip"  # both cannot hold of one frozen world
        assert not (await judge(task(flip, f"sleep 0.2; ! {flip[11:]}"), box, None)).passed
        # frozen, not killed: a check still sees the process (under its new name)
        seen = await box.run("pgrep -x kworker >/dev/null && echo 0", check=True)
        assert seen.output.strip() == "0" and not seen.stopped_killed
        # the agent's next turn thaws it: the same attack works again on its side
        assert (await box.run("! sleep 1")).exit_code == 0


async def test_a_respawning_fork_bomb_is_frozen_at_once() -> None:
    bomb = "b() { while :; do (pkill -9 -x sleep; b &) 2>/dev/null; done; }; (b &) ; true"
    async with Sandbox(LIMITS) as box:
        await box.run(bomb)
        assert not (await judge(task("! sleep 1"), box, None)).passed
        await box.run(bomb)  # the init kills it before the check and notes so on stderr
        v = await judge(task("echo 1"), box, None)  # (on stdout the note made it pass)
        assert not v.passed and "leftover processes" in v.stderr


async def test_a_container_the_kernel_refuses_falls_back_to_the_signal_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where a child cannot enter the groups (cgroups not delegated to us), the init says so
    at start and stops processes by signals, rather than fail every command."""
    refusing = lambda _self: [os.open("/dev/full", os.O_WRONLY) for _ in range(3)]  # noqa: E731
    monkeypatch.setattr(freezer.Container, "open_fds", refusing)
    async with Sandbox(LIMITS) as box:
        assert box.container is None
        await box.run("(while :; do pkill -9 -x sleep; done) &")
        assert (await box.run("echo ok")).output == "ok\n"
        assert not (await judge(task("! sleep 1"), box, None)).passed
