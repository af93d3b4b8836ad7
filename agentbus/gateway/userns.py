"""The user namespace a root-run agentbus puts its sandboxed agents in: they are never root.

Without root, ``bwrap --unshare-user`` maps the agent to the user's own id,
an unprivileged one. As root it would map the agent to the host's root
(uid 0 outside, whose files are its own), and dropping to ``nobody``
before bubblewrap starts is no answer either: nobody cannot reach an
interpreter installed under ``/root`` (pyenv's default) to bind it. So a
root-run agentbus makes one namespace per runner whose map sends the
sandbox's uid and gid :data:`AGENT_ID` to the host's ``nobody`` (65534)
and uid 1 to root: bubblewrap enters it as uid 1, binds what the agent may
read (root can still traverse ``/root``), then switches to :data:`AGENT_ID`
and drops every capability before the agent's first instruction; with
``no_new_privs`` set (bubblewrap always sets it) no setuid file brings
root back. An open descriptor of the namespace keeps it alive; the process
that made it exits at once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

#: the agent's uid and gid inside the sandbox (the host's nobody outside)
AGENT_ID = 1000
#: the host's unprivileged id the agent runs as when agentbus is root
NOBODY = 65534


def root_namespace() -> int | None:
    """A descriptor of a fresh user namespace mapped as the module docstring says.

    None when agentbus is not root (``bwrap --unshare-user`` is then right)
    or ``unshare`` is missing; an OSError when the kernel refuses.
    """
    if os.geteuid() != 0:
        return None
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    holder = subprocess.Popen([unshare, "--user", "cat"], stdin=subprocess.PIPE)
    try:
        proc = Path(f"/proc/{holder.pid}")
        own = os.readlink("/proc/self/ns/user")
        for _ in range(2000):  # until cat runs in its new namespace (a few ms)
            if holder.poll() is not None:
                raise OSError("unshare --user exited at once: user namespaces are off")
            if os.readlink(proc / "ns/user") != own:
                break
            os.sched_yield()
        for name in ("uid_map", "gid_map"):
            (proc / name).write_text(f"1 0 1\n{AGENT_ID} {NOBODY} 1\n")
        return os.open(proc / "ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        if holder.stdin is not None:
            holder.stdin.close()
        holder.kill()
        holder.wait()


__all__ = ["AGENT_ID", "NOBODY", "root_namespace"]
