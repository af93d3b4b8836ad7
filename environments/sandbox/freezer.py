"""The agent's process container: a cgroup v2 group frozen before every check.

Stopping the agent's processes with ``SIGSTOP`` found by scanning ``/proc``
cannot hold: a process with a POSIX timer that sends it ``SIGCONT`` every
30 ms passed both scans and killed a check's ``sleep`` (``! sleep 1``
passed 6 of 6). The kernel's freezer stops a whole group at once, no signal
resumes a frozen task, and ``cgroup.kill`` ends a group with nothing left to
respawn. So each sandbox gets a cgroup v2 group with two children:

- ``agent``: every command of the agent's session and every init script
  (the init's forked child writes itself into it through a descriptor the
  host passed, before it runs a line of the command). The host freezes it
  before a check and thaws it only if the agent gets another turn; frozen
  processes stay visible to ``ps``, ``pgrep`` and ``kill -0``, which the
  process tasks' checks use.
- ``check``: each check's processes; ``cgroup.kill`` ends whatever a check
  left behind (a check that runs the agent's code, ``bash -ic``, could start
  a process outside the frozen group) before the next check runs.

The agent cannot leave its group: the cgroup file system is not mounted in
the sandbox, mounting it needs a capability its commands lack, and the
init's descriptors are out of their reach. Where cgroup v2 with
``cgroup.freeze`` and ``cgroup.kill`` (Linux 5.14) is not writable, there is
no container (:func:`make` returns None) and the init falls back to its
``SIGSTOP`` scans (documented as weaker in ``docs/security.md``). On a
pure v2 machine the sandbox's memory group is the parent; on a hybrid one
(memory in v1) a separate v2 tree is made beside it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from environments.sandbox import cgroup

_MOUNTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
_counter = itertools.count()
#: seconds the host waits for a group to report itself frozen before it kills it instead
FREEZE_WAIT_S = 2.0


@functools.cache
def _tree() -> Path | None:
    """A v2 group of this process's own for sandbox containers, or None."""
    if os.environ.get("AGENTBUS_SANDBOX_CGROUP", "auto") == "off":
        return None
    own = cgroup._own("")
    if own is None:
        return None
    for mount in _MOUNTS:
        base = mount / own.lstrip("/")
        if not (mount / "cgroup.controllers").is_file() or not base.is_dir():
            continue
        path = base / f"agentbus-{os.getpid()}-box"
        try:
            path.mkdir(exist_ok=True)
        except OSError:
            continue
        if not (path / "cgroup.kill").exists() or not (path / "cgroup.freeze").exists():
            with contextlib.suppress(OSError):
                path.rmdir()
            continue
        atexit.register(_remove_tree, path)
        return path
    return None


def _remove_tree(path: Path) -> None:
    for group in sorted(path.glob("**/"), key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            group.rmdir()


@dataclass(frozen=True)
class Container:
    """One sandbox's v2 group: the init in it, the agent's and the checks' children."""

    group: Path
    #: whether this module made ``group`` (else it is the sandbox's memory group)
    owned: bool

    @property
    def agent(self) -> Path:
        return self.group / "agent"

    @property
    def check(self) -> Path:
        return self.group / "check"

    def open_fds(self) -> list[int]:
        """Descriptors the init inherits: the agent's and the checks' ``cgroup.procs``, the
        checks' ``cgroup.kill`` (the kernel checks a write against who opened the file)."""
        files = (self.agent / "cgroup.procs", self.check / "cgroup.procs")
        fds = [os.open(f, os.O_WRONLY | os.O_CLOEXEC) for f in files]
        return [*fds, os.open(self.check / "cgroup.kill", os.O_WRONLY | os.O_CLOEXEC)]

    def frozen(self) -> bool:
        return "frozen 1" in (self.agent / "cgroup.events").read_text()

    async def settle(self, most_s: float = 0.5) -> None:
        """Wait (at most ``most_s``) until no agent process is runnable: a background job
        the last command forked may not have reached its ``exec`` yet, and a check would
        find it frozen under its parent's name."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + most_s
        while loop.time() < deadline:
            if not any(map(_runnable, self._threads())):
                return
            await asyncio.sleep(0.005)

    def _threads(self) -> list[str]:
        try:
            return (self.agent / "cgroup.threads").read_text().split()
        except OSError:
            return []

    async def freeze(self) -> bool:
        """Freeze the agent's group; if it does not report frozen in time, kill it. True
        when frozen (the processes are kept), False when they were killed instead."""
        (self.agent / "cgroup.freeze").write_text("1")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FREEZE_WAIT_S
        while loop.time() < deadline:
            if self.frozen():
                return True
            await asyncio.sleep(0.005)
        (self.agent / "cgroup.kill").write_text("1")
        return False

    def thaw(self) -> None:
        with contextlib.suppress(OSError):
            (self.agent / "cgroup.freeze").write_text("0")

    async def remove(self) -> None:
        """Kill what is left, remove the children, and the group if this module made it."""
        for child in (self.agent, self.check):
            with contextlib.suppress(OSError):
                (child / "cgroup.kill").write_text("1")
            await cgroup.remove(child)
        if self.owned:
            await cgroup.remove(self.group)


def _runnable(tid: str) -> bool:
    try:
        stat = Path(f"/proc/{tid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"R"


def available() -> bool:
    """Whether sandboxes here get a container (else the init's signal stops are used)."""
    run = cgroup.root()
    return (run is not None and run.version == 2) or _tree() is not None


def make(memory_group: Path | None) -> Container | None:
    """A container for one sandbox, or None where cgroup v2 cannot give one."""
    run = cgroup.root()
    if memory_group is not None and run is not None and run.version == 2:
        group, owned = memory_group, False
    else:
        tree = _tree()
        if tree is None:
            return None
        group, owned = tree / f"sb-{next(_counter)}", True
    try:
        if owned:
            group.mkdir()
        (group / "agent").mkdir()
        (group / "check").mkdir()
    except OSError:
        for path in (group / "agent", group / "check", *((group,) if owned else ())):
            with contextlib.suppress(OSError):
                path.rmdir()
        return None
    return Container(group, owned)
