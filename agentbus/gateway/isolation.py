"""Where a command agent runs: a bubblewrap sandbox by allowlist (the default) or beside agentbus.

A command agent is untrusted code: models act through it, and a code-writing
agent runs whatever the model writes. In the sandbox
(:mod:`agentbus.gateway.sandbox`) it sees, read-only, only what
:mod:`agentbus.gateway.sandbox_paths` lists (system directories, its
interpreter and packages, its own code, ``--agent-path``), and writes only
a fresh private directory of its own (a sized tmpfs, its working directory,
``HOME`` and ``TMPDIR``) that is gone when the episode ends; it has its own
PID, IPC and UTS namespaces, an unprivileged user (never the host's root),
no capabilities, and limits on its whole process tree. The network is
shared: the agent must reach the gateway on loopback and whatever services
it uses itself.

``--agent-isolation none`` runs it beside agentbus as the same user, in a
fresh private directory per episode too (so no episode, and no replay,
finds what another left), but able to read agentbus's ``/proc/PID/environ``
and memory (the provider keys) and its siblings' tokens.

bubblewrap is a small setuid-free tool (the ``bubblewrap`` package) that
Flatpak uses; the per-episode cost is measured in ``benchmarks/gateway.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentbus.core.errors import UserError

Mode = Literal["sandbox", "none"]

#: the one line printed when a run chooses ``--agent-isolation none``
NONE_WARNING = (
    "--agent-isolation none: your agent runs as you, beside agentbus: it can read "
    "agentbus's memory and environment (provider keys) and other episodes' tokens"
)

MISSING = (
    "--agent-cmd runs each agent in a bubblewrap sandbox, and 'bwrap' is not installed: "
    "install the bubblewrap package (apt install bubblewrap), or pass --agent-isolation none"
)

#: defaults of the limits (the run's flags; blame never runs looser ones from a manifest)
MEMORY_MB = 4096
DISK_MB = 1024
PIDS = 256


@dataclass(frozen=True)
class Isolation:
    """How each command agent process is confined (one per run, shared by its episodes).

    :func:`agentbus.gateway.sandbox.check` says whether it can start here.
    """

    mode: Mode = "sandbox"
    #: memory of the agent's whole process tree, its private directory included, MiB
    #: (``--agent-memory-mb``; a cgroup where one can be made; each process's data
    #: limit too: heap and private mappings, not the address space, which WebAssembly
    #: reserves by the gigabyte without using it). None: no limit
    memory_mb: int | None = MEMORY_MB
    #: CPU seconds of the whole tree (None: no limit; the wall-clock limit still holds)
    cpu_s: float | None = None
    #: size of the private directory (tmpfs), MiB (``--agent-disk-mb``)
    disk_mb: int = DISK_MB
    #: processes (and threads) of the tree at once, where a cgroup can count them
    pids: int = PIDS
    #: extra paths the agent may read (``--agent-path``)
    paths: tuple[Path, ...] = ()
    #: places never shown whole, beside agentbus's working directory and home
    #: (the run directory, the LLM cache)
    hidden: tuple[Path, ...] = field(default_factory=tuple)


NONE = Isolation(mode="none")


def replay_isolation(run: Isolation, *, allow_none: bool, paths: Sequence[Path] = ()) -> Isolation:
    """The isolation a replay of a run may use: the run's, never looser than the defaults.

    A run directory is data: its manifest could have been edited. So
    ``--agent-isolation none`` read from it stops the replay in one line unless
    the replay's own command line says so too; ``--agent-path`` entries must be
    given again on that command line (a path only the manifest names is
    refused); limits above the defaults are brought down to them.
    """
    if run.mode == "none" and not allow_none:
        raise UserError(
            "this run's agent ran with --agent-isolation none; a replay reads that from the "
            "run directory, which anyone could have edited: pass --agent-isolation none on "
            "this command line to replay it unsandboxed"
        )
    given = {p.resolve() for p in paths}
    for path in run.paths:
        if path.resolve() not in given:
            raise UserError(
                f"this run's agent could read {path} (--agent-path); pass --agent-path {path} "
                "on this command line to let the replay read it too"
            )

    def lower(value: int | None, default: int) -> int:
        return default if value is None else min(value, default)

    return Isolation(
        mode="none" if allow_none else "sandbox",
        memory_mb=lower(run.memory_mb, MEMORY_MB),
        cpu_s=run.cpu_s,
        disk_mb=lower(run.disk_mb, DISK_MB),
        pids=lower(run.pids, PIDS),
        paths=tuple(paths),
        hidden=run.hidden,
    )


__all__ = ["MISSING", "NONE", "NONE_WARNING", "Isolation", "Mode", "replay_isolation"]
