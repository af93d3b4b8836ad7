"""A memory cgroup per sandbox, where the machine lets agentbus make one.

rlimits bound each process (address space) but not a sandbox: 64 processes
of 1 GiB each plus nine tmpfs mounts add up to tens of GiB, and tmpfs pages
belong to no process at all. A memory cgroup counts all of it (processes,
tmpfs, memfds, kernel memory) and the kernel's OOM killer acts inside the
group when it is full, so one sandbox can only hurt itself (its commands
run with ``oom_score_adj`` 1000, so they go before the sandbox's init).

Layout: one group per agentbus process (``agentbus-<pid>``, limited to the
run's sandbox budget, :func:`budget.total_mb`), one child per sandbox
(``sb-<n>``) with its own limit. cgroup v2 (``memory.max``,
``memory.swap.max``) is used where the memory controller is delegated to
our own group; else cgroup v1 (``memory.limit_in_bytes``) where its
hierarchy is writable; else none: then :meth:`SandboxLimits.worst_case_mb`
is the documented bound. bubblewrap enters its group before it starts (a
``sh`` wrapper writes its own pid to ``cgroup.procs``, then execs), so not
one page of the sandbox is charged elsewhere.
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

from environments.sandbox import budget

_V2_MOUNTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
_V1_MOUNT = Path("/sys/fs/cgroup/memory")
_counter = itertools.count()


@dataclass(frozen=True)
class Root:
    """The run's own memory group: where sandbox groups are made."""

    path: Path
    version: int

    def usage_file(self) -> Path:
        return self.path / ("memory.current" if self.version == 2 else "memory.usage_in_bytes")

    def peak_file(self) -> Path | None:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        return self.path / name if (self.path / name).exists() else None

    def usage(self) -> int:
        """Bytes charged to every sandbox of this process now."""
        return int(self.usage_file().read_text().split()[0])

    def peak(self) -> int | None:
        """The most bytes ever charged at once, when the kernel keeps it."""
        f = self.peak_file()
        return int(f.read_text().split()[0]) if f is not None else None


def _own(controller: str) -> str | None:
    """This process's group path in a hierarchy (``""`` for v2's unified one)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if names.split(",") == [controller] or (controller == "" and names == ""):
            return path
    return None


def _v2() -> Path | None:
    own = _own("")
    if own is None:
        return None
    for mount in _V2_MOUNTS:
        base = mount / own.lstrip("/")
        if not (base / "cgroup.subtree_control").is_file():
            continue
        # children get a memory controller only where it is enabled for them (delegated)
        enabled = (base / "cgroup.subtree_control").read_text().split()
        if "memory" in enabled and os.access(base, os.W_OK):
            return base
    return None


def _v1() -> Path | None:
    if not (_V1_MOUNT / "memory.limit_in_bytes").exists():
        return None
    own = _own("memory") or "/"
    base = _V1_MOUNT / own.lstrip("/")
    if not base.is_dir():
        base = _V1_MOUNT  # the hierarchy is mounted at our own group
    return base if os.access(base, os.W_OK) else None


@functools.cache
def root() -> Root | None:
    """The run's memory group (made once per process), or None where none can be made."""
    if os.environ.get("AGENTBUS_SANDBOX_CGROUP", "auto") == "off":
        return None
    for version, finder in ((2, _v2), (1, _v1)):
        base = finder()
        if base is None:
            continue
        path = base / f"agentbus-{os.getpid()}"
        try:
            path.mkdir(exist_ok=True)
            if version == 1:  # on by default in recent kernels (and then not writable)
                with contextlib.suppress(OSError):
                    (path / "memory.use_hierarchy").write_text("1")
            else:  # sandbox groups below this one need the controller handed down
                (path / "cgroup.subtree_control").write_text("+memory")
            # the run's whole budget as a kernel limit too: page cache a removed sandbox
            # group hands up to this one is reclaimed within it, never counted beyond it
            total = str(budget.total_mb() * 1024 * 1024)
            (path / ("memory.max" if version == 2 else "memory.limit_in_bytes")).write_text(total)
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            continue
        atexit.register(_remove, path)
        return Root(path, version)
    return None


def _remove(path: Path) -> None:
    for child in path.glob("sb-*"):
        with contextlib.suppress(OSError):
            child.rmdir()
    with contextlib.suppress(OSError):
        path.rmdir()


def make(limit_mb: int) -> Path | None:
    """A fresh group for one sandbox with ``limit_mb`` of memory (no swap), or None."""
    run = root()
    if run is None:
        return None
    path = run.path / f"sb-{next(_counter)}"
    limit = str(limit_mb * 1024 * 1024)
    try:
        path.mkdir()
        if run.version == 2:
            (path / "memory.max").write_text(limit)
            swap = path / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
        else:
            (path / "memory.limit_in_bytes").write_text(limit)
            memsw = path / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                with contextlib.suppress(OSError):
                    memsw.write_text(limit)
    except OSError:
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return path


def enter_argv(group: Path | None, argv: list[str], also: Path | None = None) -> list[str]:
    """``argv`` prefixed so that it runs inside ``group`` (and ``also``, a group of another
    hierarchy: the sandbox's v2 container beside a v1 memory group) from its first
    instruction."""
    groups = [str(g / "cgroup.procs") for g in (group, also) if g is not None]
    if not groups:
        return argv
    # should a move be refused, the sandbox still starts (bounded by its rlimits only)
    enter = 'echo $$ 2>/dev/null > "$0"; exec "$@"'
    if len(groups) == 2:
        enter = 'echo $$ 2>/dev/null > "$0"; echo $$ 2>/dev/null > "$1"; shift; exec "$@"'
    return ["/bin/sh", "-c", enter, *groups, *argv]


async def remove(group: Path | None) -> None:
    """Remove a sandbox's group once its processes are gone (tries for up to a second)."""
    if group is None:
        return
    for _ in range(50):
        try:
            os.rmdir(group)
            return
        except FileNotFoundError:
            return
        except OSError:  # busy: the kernel is still tearing the namespace down
            await asyncio.sleep(0.02)
