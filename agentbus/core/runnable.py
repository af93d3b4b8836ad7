"""Which registered environments a user can actually run from the command line.

An environment is runnable when it can make its own tasks, i.e. it overrides
:meth:`Environment.setup`. The registry may also hold environments without a
task loader (a plugin's fixture; the core's own countdown fixture,
:mod:`agentbus.core.demo`, is not registered at all); offering those to ``--env`` would end in a
traceback halfway into a run, so the command lines refuse them up front with
one line that lists what does run.
"""

from __future__ import annotations

from typing import Any

from agentbus.core import registry
from agentbus.core.environment import Environment
from agentbus.core.errors import UserError


def is_runnable(env_cls: Any) -> bool:
    """True when ``env_cls`` can load or generate its own tasks."""
    setup = getattr(env_cls, "setup", None)
    if setup is None:
        return False
    base = Environment.setup.__func__  # type: ignore[attr-defined]
    return getattr(setup, "__func__", setup) is not base


def runnable_environments() -> list[str]:
    """Names of the registered environments that can be run (loads each one)."""
    found = []
    for name in registry.names("environments"):
        try:
            env_cls = registry.get("environments", name)
        except UserError:
            continue  # a broken third-party plugin is not offered either
        if is_runnable(env_cls):
            found.append(name)
    return found


def require_runnable(name: str) -> Any:
    """The environment class ``name``, or a one-line UserError naming the runnable ones."""
    known = registry.names("environments")
    if name not in known:
        raise UserError(
            f"unknown environment {name!r}; runnable: {', '.join(runnable_environments())}"
        )
    env_cls = registry.get("environments", name)
    if not is_runnable(env_cls):
        raise UserError(
            f"environment {name!r} has no task loader, so it cannot be run; "
            f"runnable: {', '.join(runnable_environments())}"
        )
    return env_cls
