"""Can bubblewrap sandboxes run here? Asked once per process.

A missing ``bwrap`` binary, a kernel without unprivileged user namespaces,
or a container that forbids them all end the same way: the environment
refuses to start with this one line instead of failing in every episode.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from environments.sandbox.bwrap import bwrap_argv, bwrap_path
from environments.sandbox.limits import SandboxLimits


@functools.cache
def unavailable() -> str | None:
    """None when a sandbox starts and runs ``true``; else why not, in one line."""
    if bwrap_path() is None:
        return (
            "bubblewrap is unavailable: no 'bwrap' on PATH "
            "(install the Debian/Ubuntu package 'bubblewrap')"
        )
    return _refusal(bwrap_argv(["true"], SandboxLimits()), "bubblewrap is unavailable")


@functools.cache
def persistent_unavailable() -> str | None:
    """Like :func:`unavailable`, for the persistent sandbox: its init needs ``python3``
    in ``/usr`` and the namespace's capabilities (``--cap-add``, refused by a setuid
    bubblewrap), its commands ``setpriv``."""
    why = unavailable()
    if why is not None:
        return why
    for tool in ("/usr/bin/python3", "/usr/bin/setpriv"):
        if not Path(tool).exists():
            return f"the os sandbox needs {tool} (Debian/Ubuntu packages python3, util-linux)"
    argv = bwrap_argv(["/usr/bin/python3", "-I", "-S", "-c", "pass"], SandboxLimits(), caps=True)
    return _refusal(argv, "bubblewrap cannot keep capabilities for the sandbox's init")


def _refusal(argv: list[str], failed: str) -> str | None:
    """None when ``argv`` runs and exits 0; else one line: ``failed`` and why.

    A one-off check before any episode starts (setup runs before the event
    loop's work), so it may block.
    """
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap is unavailable: {exc}"
    if proc.returncode != 0:
        why = " ".join(proc.stderr.split()) or f"exit status {proc.returncode}"
        return f"{failed}: {why}"
    return None
