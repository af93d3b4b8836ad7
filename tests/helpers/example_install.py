"""Register an example package's plugins as ``pip install -e examples/NAME`` would, for a test.

The examples declare their environment and expert as entry points in their
own pyproject.toml; a test puts the folder on ``sys.path`` and registers each
entry point by name for as long as it needs them (the shared virtualenv is
not modified).
"""

from __future__ import annotations

import importlib
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentbus.core import registry


@contextmanager
def installed(example: Path) -> Iterator[None]:
    """``example``'s entry points registered and its folder importable, until the block ends."""
    project = tomllib.loads((example / "pyproject.toml").read_text())["project"]
    entries = [
        (group.removeprefix("agentbus."), name, value)
        for group, table in project["entry-points"].items()
        for name, value in table.items()
    ]
    sys.path.insert(0, str(example))
    try:
        for group, name, value in entries:
            module, _, attr = value.partition(":")
            registry.register(group, name, getattr(importlib.import_module(module), attr))
        yield
    finally:
        for group, name, _ in entries:
            registry.unregister(group, name)
        sys.path.remove(str(example))
