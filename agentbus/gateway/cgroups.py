"""A control group per agent episode: memory (its tmpfs included), processes and CPU time.

rlimits bound one process each, and a tree of processes multiplies them:
four children of 200 MiB under a 256 MiB limit, and a private ``/tmp`` whose
pages belong to no process, once held 2.3 GiB for one episode. A cgroup
counts the whole tree: every page its processes and its tmpfs use
(``memory``), the processes themselves (``pids``) and their CPU time
(``cpuacct``/``cpu.stat``, read by the runner, which kills the tree past
its limit). cgroup v2 is used where its controllers are delegated to our
own group, else the v1 hierarchies that are writable; where none can be
made (no root, no delegation) the episode runs with its rlimits only, and
``python -m agentbus.sandbox`` says so.

The sandbox enters its groups before bubblewrap starts (a ``sh`` that
writes its own pid into each group's ``cgroup.procs``, then execs), so not
one page or process of the agent is counted elsewhere.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
from dataclasses import dataclass
from pathlib import Path

_V1 = Path("/sys/fs/cgroup")
_V2 = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
_counter = itertools.count()
MIB = 1024 * 1024


@dataclass(frozen=True)
class Group:
    """One episode's groups (one per hierarchy) and the files that bound and measure them."""

    dirs: tuple[Path, ...]
    version: int

    def usage_ns(self) -> int | None:
        """CPU time of the whole tree so far, in nanoseconds (None where it is not counted)."""
        for d in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                if self.version == 1 and (d / "cpuacct.usage").exists():
                    return int((d / "cpuacct.usage").read_text())
                if self.version == 2:
                    for line in (d / "cpu.stat").read_text().splitlines():
                        if line.startswith("usage_usec"):
                            return int(line.split()[1]) * 1000
        return None

    def out_of_memory(self) -> bool:
        """Whether the kernel refused the tree memory (an OOM kill or a failed charge)."""
        for d in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                if self.version == 2 and (d / "memory.events").exists():
                    events = dict(
                        line.split() for line in (d / "memory.events").read_text().splitlines()
                    )
                    return int(events.get("oom_kill", 0)) > 0 or int(events.get("max", 0)) > 0
                if self.version == 1 and (d / "memory.oom_control").exists():
                    for line in (d / "memory.oom_control").read_text().splitlines():
                        if line.startswith("oom_kill ") and int(line.split()[1]) > 0:
                            return True
                    return int((d / "memory.failcnt").read_text()) > 0
        return False

    def kill(self) -> None:
        """SIGKILL every process in the group. bubblewrap starts the agent in a session of
        its own (``--new-session``), which a kill of the launched process group misses."""
        for _ in range(5):  # a process may fork while the list is read
            pids: set[int] = set()
            for d in self.dirs:
                with contextlib.suppress(OSError, ValueError):
                    pids.update(int(p) for p in (d / "cgroup.procs").read_text().split())
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        for d in self.dirs:
            with contextlib.suppress(OSError):
                d.rmdir()


def _groups() -> dict[str, str]:
    """This process's group path per controller (``""`` for the v2 hierarchy)."""
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        _, names, path = line.split(":", 2)
        out.update(dict.fromkeys(names.split(",") if names else [""], path))
    return out


def _writable(base: Path) -> bool:
    return base.is_dir() and os.access(base, os.W_OK)


@functools.cache
def _bases() -> tuple[int, dict[str, Path]]:
    """The version and the folder per controller where episode groups can be made."""
    if os.environ.get("AGENTBUS_AGENT_CGROUP", "auto") == "off":
        return 0, {}
    groups = _groups()
    own = groups.get("")
    for mount in _V2 if own is not None else ():
        base = mount / (own or "/").lstrip("/")
        control = base / "cgroup.subtree_control"
        with contextlib.suppress(OSError):
            enabled = control.read_text().split()
            if {"memory", "pids"} <= set(enabled) and _writable(base):
                return 2, {"memory": base}
    found: dict[str, Path] = {}
    for controller in ("memory", "pids", "cpuacct"):
        own_path = groups.get(controller)
        root = _V1 / controller
        if own_path is None or not root.is_dir():
            continue
        base = root / own_path.lstrip("/")
        base = base if base.is_dir() else root
        if _writable(base):
            found[controller] = base
    return (1, found) if "memory" in found else (0, {})


def available() -> str:
    """What the machine allows, in words (for ``python -m agentbus.sandbox``)."""
    version, bases = _bases()
    if version == 0:
        return "none (no writable cgroup here): rlimits per process only"
    return f"cgroup v{version}: " + ", ".join(sorted(bases))


def make(memory_mb: int | None, pids: int | None) -> Group | None:
    """A fresh group for one episode with these limits, or None where none can be made."""
    version, bases = _bases()
    if version == 0:
        return None
    name = f"agentbus-{os.getpid()}-agent-{next(_counter)}"
    made: list[Path] = []
    try:
        for controller, base in bases.items():
            d = base / name
            d.mkdir()
            made.append(d)
            if controller == "memory" and memory_mb is not None:
                limit = str(memory_mb * MIB)
                if version == 2:
                    (d / "memory.max").write_text(limit)
                    with contextlib.suppress(OSError):
                        (d / "memory.swap.max").write_text("0")
                else:
                    (d / "memory.limit_in_bytes").write_text(limit)
                    with contextlib.suppress(OSError):
                        (d / "memory.memsw.limit_in_bytes").write_text(limit)
            if (controller == "pids" or version == 2) and pids is not None:
                (d / "pids.max").write_text(str(pids))
    except OSError:
        Group(tuple(made), version).remove()
        return None
    return Group(tuple(made), version)


def enter_argv(group: Group | None, argv: list[str]) -> list[str]:
    """``argv`` prefixed so that it runs inside ``group`` from its first instruction."""
    if group is None:
        return argv
    files = [str(d / "cgroup.procs") for d in group.dirs]
    script = 'for f in "$@"; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; done; '
    script += 'while [ "$1" != -- ]; do shift; done; shift; exec "$@"'
    return ["/bin/sh", "-c", script, "sh", *files, "--", *argv]


__all__ = ["Group", "available", "enter_argv", "make"]
