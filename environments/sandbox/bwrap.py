"""The bubblewrap command line of a sandbox (a pure function, easy to test).

What the sandboxed process sees: a read-only ``/usr`` (and the merged-usr
symlinks, ``/etc/alternatives`` for Debian's awk and friends), its own
``/proc`` and a minimal read-only ``/dev`` (with a sized ``/dev/shm``);
everything writable (``/root``, ``/tmp``, ``/etc``, ``/home``, ``/var``,
``/run``, ...) is a private tmpfs of bounded
size and the root itself is read-only, so nothing written inside reaches the
host disk and nothing is left once the sandbox ends. New user, PID, IPC, UTS,
network and cgroup namespaces; uid 0 inside is mapped to an unprivileged id
outside (``nobody`` when agentbus runs as root, else the caller's own id),
so "root" in the sandbox has no power over the host. ``--as-pid-1`` makes the
supervisor the namespace's init, which signals from inside cannot kill
(``kill -9 -1`` ends the commands, not the sandbox); ``--die-with-parent``
takes the whole namespace down with the agentbus process.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from environments.sandbox.limits import SandboxLimits

#: the unprivileged host id a root-run agentbus drops to for the sandbox
NOBODY = 65534
#: writable directories of the sandbox, each a sized tmpfs
WRITABLE: tuple[str, ...] = (
    "/root",
    "/tmp",
    "/home",
    "/etc",
    "/var",
    "/run",
    "/opt",
    "/srv",
    "/mnt",
)
#: host paths bound read-only (merged /usr covers bash, coreutils, procps, zip, coqc, ...)
READ_ONLY: tuple[str, ...] = ("/usr",)
#: merged-usr symlinks recreated inside
SYMLINKS: tuple[tuple[str, str], ...] = (
    ("usr/bin", "/bin"),
    ("usr/sbin", "/sbin"),
    ("usr/lib", "/lib"),
    ("usr/lib64", "/lib64"),
)


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def drop_privileges() -> list[str]:
    """A ``setpriv`` prefix that runs bwrap as ``nobody`` when we are root.

    As root, bwrap would map the sandbox's uid 0 to the host's root, which
    RLIMIT_NPROC does not restrain (a fork bomb would fill the host's
    process table). Dropped to nobody, the user namespace is an ordinary
    unprivileged one.
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return []
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


def bwrap_argv(
    command: Sequence[str],
    limits: SandboxLimits,
    *,
    hostname: str = "sandbox",
    extra_ro: Sequence[tuple[str, str]] = (),
    bwrap: str | None = None,
    caps: bool = False,
) -> list[str]:
    """The full argv: privilege drop, bwrap with its mounts, then ``command`` inside.

    ``caps`` keeps the user namespace's capabilities for ``command`` (the
    persistent sandbox's init, which drops them for every command it runs):
    a process without them cannot ptrace, or open the descriptors and memory
    of, one that has them.
    """
    exe = bwrap or bwrap_path() or "bwrap"
    argv = [*drop_privileges(), exe]
    argv += ["--unshare-all", "--uid", "0", "--gid", "0", "--hostname", hostname]
    argv += ["--die-with-parent", "--as-pid-1", "--new-session"]
    for path in READ_ONLY:
        argv += ["--ro-bind", path, path]
    for target, link in SYMLINKS:
        argv += ["--symlink", target, link]
    size = str(limits.disk_mb * 1024 * 1024)
    argv += ["--proc", "/proc", "--dev", "/dev"]
    # /dev itself read-only (its links /dev/stdout, /dev/fd, ... cannot be replaced by
    # files a check would then write into), with a sized /dev/shm of its own
    argv += ["--perms", "1777", "--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    for path in WRITABLE:
        argv += ["--perms", "0700" if path == "/root" else "0755", "--size", size, "--tmpfs", path]
    # after /etc exists as a tmpfs: Debian's alternatives (awk -> mawk) inside it
    if Path("/etc/alternatives").is_dir():
        argv += ["--ro-bind", "/etc/alternatives", "/etc/alternatives"]
    argv += loader_binds()
    for src, dst in extra_ro:
        argv += ["--ro-bind", src, dst]
    argv += ["--remount-ro", "/", "--chdir", "/root"]
    if caps:
        argv += ["--cap-add", "ALL"]
    # nothing of the host's environment (API keys!) crosses into the sandbox
    argv += [
        "--clearenv",
        "--setenv",
        "HOME",
        "/root",
        "--setenv",
        "PATH",
        PATH,
        "--setenv",
        "LANG",
        "C.UTF-8",
    ]
    return [*argv, *command]


#: the agent's PATH; every directory is inside the read-only /usr (or a link to one)
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def loader_binds() -> list[str]:
    """Read-only binds over the files in ``/etc`` that programs load code from.

    ``/etc`` is writable inside (tasks edit ``/etc/group``), but these files
    must not be: ``/etc/ld.so.preload`` (``/dev/null`` bound over it) would
    load a library of the agent's into every program a check runs,
    ``/etc/ld.so.cache`` could point ``libc.so.6`` at one, and Debian's
    ``/usr/lib/python3.X/sitecustomize.py`` is a link into ``/etc/python3.X``.
    A bind mount cannot be removed, renamed or replaced without privileges
    the sandbox's commands do not have.
    """
    argv = ["--ro-bind", "/dev/null", "/etc/ld.so.preload"]
    if Path("/etc/ld.so.cache").is_file():
        argv += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for site in sorted(Path("/etc").glob("python3*")):
        if site.is_dir() and not site.is_symlink():
            argv += ["--ro-bind", str(site), str(site)]
    return argv
