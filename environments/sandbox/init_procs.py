"""The first part of the sandbox's init (PID 1): its world and the other processes in it.

``supervisor.py`` sends this file and then ``init.py`` as one program
(``python3 -I -S -c``) into a sandbox where nothing of agentbus is
importable, so this part is standard library only and defines names that
``init.py`` uses as globals of the joined program. Its job: the constants of
the wire and of the check's environment, the fixed ``/etc`` the sandbox
starts with, and how the init looks at, stops, kills and reaps every other
process of the namespace (``freeze`` before a check, ``bomb_reap`` after a
fork bomb), and the resource limits it watches for tampering.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time

MARK = b"@@AB@@"
#: a check's PATH: system directories inside the read-only /usr
CHECK_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
#: a check's interpreters start without per-user or per-directory code: no user site, and
#: not the working directory first on ``sys.path`` (a bash check's ``python3 -c``)
CHECK_PYTHON = {"PYTHONSAFEPATH": "1", "PYTHONNOUSERSITE": "1"}
SETPRIV = "/usr/bin/setpriv"
BASH = "/usr/bin/bash"
#: states of a process that runs no code (stopped, traced-stopped, zombie, dead)
STILL = frozenset("TtZXx")

ETC = {
    "/etc/passwd": "root:x:0:0:root:/root:/bin/bash\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    "/etc/group": "root:x:0:\nusers:x:100:\nnogroup:x:65534:\n",
    "/etc/shadow": "root:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n",
    "/etc/gshadow": "root:*::\nusers:*::\nnogroup:*::\n",
    "/etc/nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\n",
}


def write_etc() -> None:
    """The sandbox's identity (``hosts``, ``hostname``); the accounts only where the
    image (``image.py``, copied in before) brought none."""
    host = os.uname().nodename
    files = {path: text for path, text in ETC.items() if not os.path.lexists(path)}
    files["/etc/hosts"] = f"127.0.0.1 localhost\n127.0.1.1 {host}\n"
    files["/etc/hostname"] = host + "\n"
    for path, text in files.items():
        with open(path, "w") as f:
            f.write(text)
    os.chmod("/etc/shadow", 0o640)
    os.chmod("/etc/gshadow", 0o640)
    for d in ("/run/ab", "/var/tmp", "/var/log"):
        os.makedirs(d, exist_ok=True)


def processes() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit() and n != "1"]


def threads(pid: int) -> list[str]:
    """``/proc`` paths of every thread of ``pid``: a leader that has exited shows as a
    zombie while its other threads still run, so each thread is looked at."""
    try:
        return [f"/proc/{pid}/task/{t}" for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def state(task: str) -> tuple[str, bool]:
    """(state letter, traced?) of one thread; ``("X", False)`` when it is gone."""
    try:
        with open(f"{task}/stat", "rb") as f:
            stat = f.read()
        with open(f"{task}/status", "rb") as f:
            status = f.read()
    except OSError:
        return "X", False
    letter = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3].decode() or "X"
    traced = b"\nTracerPid:\t0\n" not in status
    return letter, traced


def kill_all(sig: int) -> None:
    try:
        os.kill(-1, sig)  # every process of the namespace but init (this one)
    except (ProcessLookupError, PermissionError):
        pass


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def settle(most_s: float) -> None:
    """Wait (at most ``most_s``) until no other process is runnable: a background job the
    last command forked may not have reached its ``exec`` yet, and a check would find it
    stopped under its parent's name."""
    deadline = time.monotonic() + most_s
    while time.monotonic() < deadline:
        if not any(state(t)[0] == "R" for pid in processes() for t in threads(pid)):
            return
        time.sleep(0.005)


def freeze() -> str:
    """Stop every other process; "" when all stopped, else what was done instead."""
    for _ in range(40):
        kill_all(signal.SIGSTOP)
        clean = True
        for _scan in range(2):  # two scans a moment apart: nothing resumed in between
            time.sleep(0.005)
            for pid in processes():
                for task in threads(pid):
                    letter, traced = state(task)
                    if traced:
                        with contextlib.suppress(OSError):
                            os.kill(pid, signal.SIGKILL)
                        clean = False
                    elif letter not in STILL:
                        clean = False
            if not clean:
                break
        reap()
        if clean:
            return ""
    kill_all(signal.SIGKILL)
    reap()
    return "k"


def bomb_reap(half: int) -> int:
    """When leftovers hold more than half the process budget, kill them all; how many."""
    killed = 0
    for _ in range(20):
        reap()  # orphans that have exited are no leftovers (bash as init reaped them at once)
        n = len(processes())
        if n <= half:
            break
        killed = max(killed, n)
        kill_all(signal.SIGKILL)
        time.sleep(0.01)
        reap()
    return killed


#: every resource limit the kernel has (a check inherits those it does not set itself)
RLIMITS = tuple(getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_"))


def own_limits() -> dict[int, tuple[int, int]]:
    return {r: resource.getrlimit(r) for r in RLIMITS}
