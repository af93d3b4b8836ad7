"""Bubblewrap sandboxes shared by the environments that run model-written code.

``Sandbox`` is a persistent shell session in its own namespaces (the OS
environment keeps one per episode); ``run_once`` runs one script in a fresh
sandbox and discards it (the ATP environment compiles each proof that way).
``unavailable()`` says in one line why sandboxes cannot run here, or None.
"""

from environments.sandbox.limits import SandboxLimits
from environments.sandbox.oneshot import run_once
from environments.sandbox.probe import persistent_unavailable, unavailable
from environments.sandbox.result import KILLED, CommandResult
from environments.sandbox.shell import Sandbox, SandboxError

__all__ = [
    "KILLED",
    "CommandResult",
    "Sandbox",
    "SandboxError",
    "SandboxLimits",
    "persistent_unavailable",
    "run_once",
    "unavailable",
]
