"""Where a command agent runs: a bubblewrap sandbox (the default) or beside agentbus.

A command agent is untrusted code: models act through it, and a code-writing
agent runs whatever the model writes. Run beside agentbus (``--agent-isolation
none``) it is a process of the same user: it can read agentbus's
``/proc/PID/environ`` and memory (the provider keys) and every sibling agent's
environment (their episode tokens, which spend modules its own coalition has
switched off). In the sandbox it has its own PID, IPC and UTS namespaces and
a fresh ``/proc`` (it sees only its own processes), no capabilities, the host
filesystem read-only except its working directory and a private ``/tmp``,
and limits on memory (data) and CPU time. The network is shared: the agent
must reach the gateway on loopback and whatever services it uses itself.

bubblewrap is a small setuid-free tool (the ``bubblewrap`` package) that
Flatpak uses; starting a sandbox costs a few milliseconds (see
``benchmarks/gateway.py``).
"""

from __future__ import annotations

import resource
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentbus.errors import UserError

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


@dataclass(frozen=True)
class Isolation:
    """How each command agent process is confined (one per run, shared by its episodes)."""

    mode: Mode = "sandbox"
    #: data limit of each agent process (RLIMIT_DATA: heap and private writable mappings),
    #: MiB; not the address space, which WebAssembly reserves by the gigabyte (Node's
    #: fetch runs on it) without using it (None: no limit)
    memory_mb: int | None = 4096
    #: CPU seconds per agent process (None: no limit; the wall-clock limit still holds)
    cpu_s: float | None = None
    #: paths inside the working directory that stay read-only (the run directory)
    readonly: tuple[Path, ...] = field(default_factory=tuple)

    def check(self) -> None:
        """Stop the run in one line when the sandbox cannot start (no bwrap, no namespaces)."""
        if self.mode == "none":
            return
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise UserError(MISSING)
        probe = subprocess.run(
            self.wrap(["true"], Path("/")),
            capture_output=True,
            text=True,
            timeout=30,
        )
        if probe.returncode != 0:
            reason = (probe.stderr.strip().splitlines() or ["no reason given"])[-1]
            raise UserError(
                f"the bubblewrap sandbox does not start here ({reason}); "
                "allow user namespaces, or pass --agent-isolation none"
            )

    def wrap(self, argv: Sequence[str], cwd: Path) -> list[str]:
        """``argv`` as run in this mode (unchanged for ``none``)."""
        if self.mode == "none":
            return list(argv)
        work = str(cwd.resolve())
        out = [
            shutil.which("bwrap") or "bwrap",
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/tmp",
            "--tmpfs", "/dev/shm",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--cap-drop", "ALL",
            "--die-with-parent", "--new-session",
        ]  # fmt: skip
        if work != "/":
            out += ["--bind", work, work]
        for path in self.readonly:
            resolved = path.resolve()
            if resolved.is_relative_to(work) and resolved.exists():
                out += ["--ro-bind", str(resolved), str(resolved)]
        out += ["--chdir", work, "--"]
        return out + list(argv)

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """The environment inside: the private ``/tmp`` is the agent's temporary directory."""
        if self.mode == "none":
            return env
        return {**env, "TMPDIR": "/tmp"}

    def limits(self) -> Callable[[], None] | None:
        """A pre-exec hook setting the resource limits (None when there are none)."""
        if self.mode == "none" or (self.memory_mb is None and self.cpu_s is None):
            return None
        memory = None if self.memory_mb is None else self.memory_mb * 1024 * 1024
        cpu = None if self.cpu_s is None else max(1, int(self.cpu_s + 0.999))

        def apply() -> None:  # runs in the child between fork and exec: async-signal-safe calls
            if memory is not None:
                resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
            if cpu is not None:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))

        return apply


NONE = Isolation(mode="none")

__all__ = ["MISSING", "NONE", "NONE_WARNING", "Isolation", "Mode"]
