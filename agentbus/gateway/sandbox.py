"""One runner's sandbox: the bubblewrap command line, and each episode's launch and cleanup.

The view (what the agent may read, :mod:`agentbus.gateway.sandbox_paths`)
is fixed when the runner starts; each process then gets a :class:`Launch`:
a fresh private directory (inside the sandbox a tmpfs of ``disk_mb`` at
``/tmp``, its working directory, ``HOME`` and ``TMPDIR``, gone with the
sandbox's mount namespace; beside agentbus a new host folder, removed when
the process ends), a fresh cgroup for its tree (:mod:`agentbus.gateway.cgroups`)
and rlimits for each of its processes. :meth:`Sandbox.explain` turns a
failure on a path the sandbox hides into the path and the flag that shows it.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentbus.core.errors import UserError
from agentbus.gateway import cgroups, sandbox_paths, userns
from agentbus.gateway.isolation import MISSING, Isolation

#: inside the sandbox: the private directory (working directory, HOME, TMPDIR)
PRIVATE = "/tmp"
MIB = 1024 * 1024
_PATHS = re.compile(r"""(?:['"`]([^'"`\n]{1,400})['"`])|(/[\w.@+\-/]{2,400})""")


@dataclass
class Launch:
    """How one agent process starts, and what to undo when it has ended."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    fds: tuple[int, ...] = ()
    preexec: Callable[[], None] | None = None
    group: cgroups.Group | None = None
    private: Path | None = None
    closed: bool = field(default=False, repr=False)

    def kill(self, pid: int) -> None:
        """Kill the launched process's group and every process in its cgroup."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        if self.group is not None:
            self.group.kill()

    def close(self) -> None:
        """Remove the episode's group and private folder (the tmpfs goes by itself)."""
        if self.closed:
            return
        self.closed = True
        if self.group is not None:
            self.group.remove()
        if self.private is not None:
            shutil.rmtree(self.private, ignore_errors=True)


class Sandbox:
    """The confinement of one runner's processes (see the module docstring)."""

    def __init__(
        self, isolation: Isolation, argv: Sequence[str], launch_dir: Path, env: Mapping[str, str]
    ) -> None:
        self.isolation = isolation
        self.launch_dir = launch_dir.resolve()
        protected = [self.launch_dir, *(p.resolve() for p in isolation.hidden)]
        if env.get("HOME") or os.environ.get("HOME"):
            protected.append(Path(env.get("HOME") or os.environ["HOME"]).resolve())
        for path in isolation.paths:
            for hidden in isolation.hidden:
                if hidden.resolve() == path.resolve() or hidden.resolve().is_relative_to(
                    path.resolve()
                ):
                    raise UserError(
                        f"--agent-path {path} holds {hidden}, which an agent must not read "
                        "(the run directory or the LLM cache): name the agent's own folders"
                    )
        self.view = sandbox_paths.build(
            argv, launch_dir=self.launch_dir, env=env, extra=isolation.paths, protected=protected
        )
        self.ns: int | None = None
        if isolation.mode == "sandbox":
            try:
                self.ns = userns.root_namespace()
            except OSError as exc:
                raise UserError(
                    f"the bubblewrap sandbox needs a user namespace, and the kernel refused one "
                    f"({exc}); allow user namespaces, or pass --agent-isolation none"
                ) from None

    def bwrap_argv(self) -> list[str]:
        """bubblewrap's options: the view read-only, a sized private tmpfs, new namespaces."""
        iso = self.isolation
        out = [shutil.which("bwrap") or "bwrap"]
        if self.ns is not None:
            out += ["--userns", str(self.ns), "--uid", str(userns.AGENT_ID)]
            out += ["--gid", str(userns.AGENT_ID)]
        else:
            out += ["--unshare-user"]
        out += [
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(iso.disk_mb * MIB), "--perms", "0700", "--tmpfs", PRIVATE,
            "--size", str(64 * MIB), "--tmpfs", "/dev/shm",
        ]  # fmt: skip
        for target, link in self.view.links:
            out += ["--symlink", target, link]
        for path in self.view.readonly:
            out += ["--ro-bind", str(path), str(path)]
        return [*out, "--chdir", PRIVATE, "--remount-ro", "/", "--"]

    def launch(self, env: Mapping[str, str], *, group: bool = True) -> Launch:
        """One process's start: its command line, environment, directory and limits."""
        iso = self.isolation
        limits = _rlimits(iso.memory_mb, iso.cpu_s, iso.disk_mb)
        if iso.mode == "none":
            private = Path(tempfile.mkdtemp(prefix="agentbus-agent-"))
            inner = {**env, "TMPDIR": str(private)}
            return Launch(self.view.argv, inner, private, preexec=limits, private=private)
        made = cgroups.make(iso.memory_mb, iso.pids) if group else None
        argv = cgroups.enter_argv(made, [*self.bwrap_argv(), *self.view.argv])
        inner = {**env, "TMPDIR": PRIVATE, "HOME": PRIVATE, "PWD": PRIVATE}
        fds = (self.ns,) if self.ns is not None else ()
        return Launch(argv, inner, Path("/"), fds, limits, made)

    def explain(self, stderr: str) -> str:
        """What to add to a failure whose output names a path the agent could not see."""
        if self.isolation.mode == "none":
            return ""
        for match in _PATHS.finditer(stderr):
            word = (match.group(1) or match.group(2) or "").strip()
            if not word or "\n" in word or word.startswith("<"):
                continue
            host = Path(word) if word.startswith("/") else self.launch_dir / word
            root = next((p for p in self.view.readonly if host.is_relative_to(p)), None)
            if self.ns is not None and root is not None and not _others_read(host, root):
                return (
                    f" (agentbus runs as root, so the agent runs as the host's nobody, which "
                    f"cannot read {host}: make it readable by others, chmod o+rX)"
                )
            if not host.is_absolute() or self.view.shows(host):
                continue
            try:
                exists = host.exists()
            except OSError:
                exists = False
            if not exists:
                continue
            if not word.startswith("/"):
                return (
                    f" (the agent runs in a fresh private directory, not in {self.launch_dir}: "
                    f"give --agent-path {host} and open it by that path)"
                )
            return f" (the sandbox does not show {host} to the agent: give --agent-path {host})"
        return ""

    def close(self) -> None:
        if self.ns is not None:
            with contextlib.suppress(OSError):
                os.close(self.ns)
            self.ns = None


def check(isolation: Isolation) -> None:
    """Stop the run in one line when the sandbox cannot start (no bwrap, no namespaces)."""
    if isolation.mode == "none":
        return
    if shutil.which("bwrap") is None:
        raise UserError(MISSING)
    sandbox = Sandbox(isolation, ["/bin/true"], Path("/"), {"PATH": "/usr/bin:/bin"})
    launch = sandbox.launch({}, group=False)
    try:
        probe = subprocess.run(
            launch.argv, capture_output=True, text=True, timeout=30, pass_fds=launch.fds,
            env=launch.env, cwd=launch.cwd,
        )  # fmt: skip
    finally:
        launch.close()
        sandbox.close()
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise UserError(
            f"the bubblewrap sandbox does not start here ({reason}); "
            "allow user namespaces, or pass --agent-isolation none"
        )


def _others_read(path: Path, root: Path) -> bool:
    """Whether a user who owns none of it can read ``path`` bound from ``root`` (every folder
    from the bound one down searchable: inside, the folders above it are the sandbox's)."""
    try:
        if not path.exists():
            return True
        folders = [p for p in path.parents if p.is_relative_to(root)]
        mode = path.stat().st_mode
        wanted = stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0)
        return mode & wanted == wanted and all(p.stat().st_mode & stat.S_IXOTH for p in folders)
    except OSError:
        return True


def _rlimits(memory_mb: int | None, cpu_s: float | None, disk_mb: int) -> Callable[[], None] | None:
    """A pre-exec hook setting each process's limits (data, CPU seconds, file size)."""
    memory = None if memory_mb is None else memory_mb * MIB
    cpu = None if cpu_s is None else max(1, int(cpu_s + 0.999))
    fsize = disk_mb * MIB

    def apply() -> None:  # runs in the child between fork and exec: plain system calls
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
        if cpu is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def describe(sandbox: Sandbox) -> list[str]:
    """What an agent of this sandbox can see and use, one line each."""
    iso = sandbox.isolation
    if iso.mode == "none":
        return [
            "isolation none: the agent runs as you, beside agentbus; it can read everything "
            "you can, agentbus's memory and environment included",
            f"working directory: a fresh folder under {tempfile.gettempdir()} per process, "
            "removed when it ends",
            "command: " + " ".join(sandbox.view.argv),
        ]
    user = (
        f"uid {userns.AGENT_ID} inside, the host's nobody ({userns.NOBODY}) outside"
        if sandbox.ns is not None
        else f"your own uid ({os.getuid()}), in a user namespace of its own"
    )
    lines = [
        "command: " + " ".join(sandbox.view.argv),
        "read-only:",
        *(f"  {p}  ({sandbox.view.reasons.get(p, '')})" for p in sandbox.view.readonly),
        *(f"  {link} -> {target}" for target, link in sandbox.view.links),
        f"writable: {PRIVATE} (working directory, HOME, TMPDIR), a fresh tmpfs of "
        f"{iso.disk_mb} MiB per process, gone when it ends",
        f"also: a private /proc (its own processes only), a minimal /dev, /dev/shm 64 MiB; "
        f"user: {user}; no capabilities; the network is shared",
        f"limits of the process tree: memory {iso.memory_mb} MiB with its private directory, "
        f"{iso.pids} processes, CPU {iso.cpu_s or 'unlimited'} s; "
        f"counted by {cgroups.available()}",
        "environment: PATH, locale and the gateway's OPENAI_*/ANTHROPIC_*/AGENTBUS_* "
        "variables (its own episode's token); no provider key",
    ]
    return lines


__all__ = ["PRIVATE", "Launch", "Sandbox", "check", "describe"]
