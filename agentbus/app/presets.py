"""Presets: named starting configurations (``--preset NAME``), found through the registry.

A preset is a config fragment, a mapping of :class:`~agentbus.app.config.RunConfig`
keys (agent, env, slots, vary, default, test, shift, ...) registered under the
entry-point group ``agentbus.presets``, so a plugin adds one with a single line
in its ``pyproject.toml``::

    [project.entry-points."agentbus.presets"]
    mirror = "modules.mirror:PRESET"

The fragment sits underneath everything else: a TOML file and flags override
any key it sets, and a resumed run's manifest (which holds every key) too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentbus.app.config import RunConfig
from agentbus.core import registry
from agentbus.core.errors import UserError


def preset_fragment(name: str | None) -> dict[str, Any]:
    """The config keys preset ``name`` sets (``{}`` for None); one-line errors otherwise."""
    if name is None:
        return {}
    fragment = registry.get("presets", name)
    if not isinstance(fragment, Mapping):
        raise UserError(f"preset {name!r} is not a mapping of config keys")
    unknown = sorted(set(fragment) - set(RunConfig.model_fields))
    if unknown:
        raise UserError(f"preset {name!r} sets unknown config keys: {', '.join(unknown)}")
    if "preset" in fragment:
        raise UserError(f"preset {name!r} may not name another preset")
    return {**fragment, "preset": name}


def preset_names() -> list[str]:
    """Every preset the registry knows (built-in and plugins')."""
    return registry.names("presets")


__all__ = ["preset_fragment", "preset_names"]
