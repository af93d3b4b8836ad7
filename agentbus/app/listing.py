"""``python -m agentbus.list envs|modules|agents|presets|backends``: what can be named.

Everything a run can name (``--env``, ``--agent``, ``--preset``, the backend
of a model spec, a module in ``--vary``) is found through the registry's entry
points, so a plugin package that declares its own shows up here beside the
built-in ones. Each row gives the name, where it comes from (the entry point's
target, or "registered in this process") and the first line of its docstring,
so a user can pick without reading the source.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any

from agentbus.core import registry
from agentbus.core.errors import UserError
from agentbus.runs.pipes import pipe_safe

#: command-line word -> registry group
KINDS: dict[str, str] = {
    "envs": "environments",
    "modules": "modules",
    "agents": "agents",
    "presets": "presets",
    "backends": "backends",
    "experts": "experts",
}

#: the kernel's LLM-free countdown fixture: registered for tests, not runnable
_FIXTURES = ("agentbus.core.demo:",)


def environment_names() -> list[str]:
    """Environment names for ``--help``, read from the entry points without importing them.

    ``--help`` must stay fast, so this does not load each environment to ask
    whether it can make tasks; it leaves out the kernel's test fixture, which
    cannot (``python -m agentbus.list envs`` says so for any other).
    """
    eps = entry_points(group=registry.GROUPS["environments"])
    return sorted(ep.name for ep in eps if not ep.value.startswith(_FIXTURES))


def _summary(obj: Any, verb: str = "sets") -> str:
    """First line of the object's docstring (for a mapping: an agent's slots, a preset's keys)."""
    if isinstance(obj, dict):
        keys = ", ".join(f"{k}={v}" for k, v in obj.items() if isinstance(v, str | int | float))
        return f"{verb} {keys}" if keys else f"{verb} {', '.join(obj)}"
    doc = getattr(obj, "__doc__", None) or ""
    if isinstance(obj, str | int | float | list | tuple):
        doc = ""
    line = doc.strip().splitlines()[0] if doc.strip() else ""
    return line.rstrip()


def rows(kind: str) -> list[tuple[str, str, str]]:
    """``(name, source, summary)`` per plugin of ``kind`` (a command-line word)."""
    if kind not in KINDS:
        raise UserError(f"unknown kind {kind!r}; one of: {', '.join(KINDS)}")
    group = KINDS[kind]
    sources = {ep.name: ep.value for ep in entry_points(group=registry.GROUPS[group])}
    out = []
    for name in registry.names(group):
        source = sources.get(name, "registered in this process")
        try:
            obj = registry.get(group, name)
            summary = _summary(obj, "slots" if group == "agents" else "sets")
            if group == "environments":
                from agentbus.core.runnable import is_runnable

                if not is_runnable(obj):
                    summary = "(not runnable: no task loader) " + summary
        except UserError as exc:
            summary = f"(fails to load: {exc})"
        out.append((name, source, summary))
    return out


def render(kind: str, *, verbose: bool = False) -> str:
    """Plain text, one plugin a line: ``name  summary`` (``--verbose``: and its source)."""
    found = rows(kind)
    if not found:
        return f"no {kind} registered"
    width = max(len(name) for name, _, _ in found)
    lines = []
    for name, source, summary in found:
        line = f"{name:<{width}}  {summary}".rstrip()
        if verbose:
            line += f"\n{'':<{width}}  from {source}"
        lines.append(line)
    return "\n".join(lines)


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentbus.list",
        description="List what a run can name: environments, modules, agents, presets, "
        "LLM backends and simulated experts, built-in and from installed plugins.",
        allow_abbrev=False,
    )
    parser.add_argument("kind", choices=list(KINDS), help="what to list")
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="also the entry point each comes from"
    )
    args = parser.parse_args(argv)
    try:
        print(render(args.kind, verbose=args.verbose))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


__all__ = ["KINDS", "environment_names", "main", "render", "rows"]
