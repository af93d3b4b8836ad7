"""Plugins by name: modules, agents, environments, LLM backends, simulated experts.

The core never imports ``modules``, ``environments`` or ``attribution``. They
(and any third-party package) announce themselves as entry points in their
``pyproject.toml``::

    [project.entry-points."agentbus.modules"]
    my_planner = "my_package.planner:MyPlanner"

and the core loads them here by name. Code that cannot be installed (a test,
a notebook) calls :func:`register` instead.
"""

from __future__ import annotations

import functools
import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from agentbus.core.errors import UserError

GROUPS: dict[str, str] = {
    "modules": "agentbus.modules",
    "agents": "agentbus.agents",
    "environments": "agentbus.environments",
    "backends": "agentbus.backends",
    "experts": "agentbus.experts",
    "presets": "agentbus.presets",
}

_local: dict[str, dict[str, Any]] = {group: {} for group in GROUPS}
_loaded: dict[tuple[str, str], Any] = {}


@functools.lru_cache(maxsize=64)
def _scan(ep_group: str, path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    """The entry points of ``ep_group`` installed on ``path`` (a scan takes 5-10 ms).

    Keyed on ``sys.path`` too, so a package made importable later in the process
    (a test, a notebook that extends the path) is still found; a run's many
    ``parse_spec`` calls on an unchanged path reuse one scan.
    """
    del path  # the cache key only
    return tuple(entry_points(group=ep_group))


def _entry_points(ep_group: str) -> tuple[EntryPoint, ...]:
    return _scan(ep_group, tuple(sys.path))


def _check_group(group: str) -> str:
    if group not in GROUPS:
        raise UserError(f"unknown plugin group {group!r}; known: {', '.join(GROUPS)}")
    return GROUPS[group]


def register(group: str, name: str, obj: Any) -> None:
    """Register ``obj`` under ``name`` in ``group`` for this process."""
    _check_group(group)
    _local[group][name] = obj


def unregister(group: str, name: str) -> None:
    _check_group(group)
    _local[group].pop(name, None)
    _loaded.pop((group, name), None)


def names(group: str) -> list[str]:
    """Every name available in ``group``: registered here or by entry point."""
    ep_group = _check_group(group)
    found = {ep.name for ep in _entry_points(ep_group)}
    return sorted(found | set(_local[group]))


def get(group: str, name: str) -> Any:
    """Load the plugin ``name`` of ``group``; a clear error lists what exists."""
    ep_group = _check_group(group)
    if name in _local[group]:
        return _local[group][name]
    key = (group, name)
    if key in _loaded:
        return _loaded[key]
    for ep in _entry_points(ep_group):
        if ep.name == name:
            try:
                obj = ep.load()
            except Exception as exc:
                raise UserError(
                    f"plugin {name!r} ({group}) failed to load from {ep.value}: {exc}"
                ) from exc
            _loaded[key] = obj
            return obj
    available = ", ".join(names(group)) or "none"
    raise UserError(f"unknown {group[:-1]} {name!r}; available: {available}")
