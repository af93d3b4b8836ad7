"""The module paths the kernel had before it moved into ``agentbus/core`` and
``agentbus/executors``, kept importable.

Why. Plugins and scripts written against the earlier layout import
``agentbus.events``, ``agentbus.messages`` or ``agentbus.runtime`` directly.
The move was a change of rooms, not of API, so those imports must keep
working and must give the very same module object (two copies of
``messages`` would make ``isinstance`` checks fail across them). A finder on
``sys.meta_path`` answers each old name with the module at its new home,
importing it only when asked, so ``import agentbus`` stays as cheap as it is.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

#: old dotted name -> where the module lives now
MOVED: dict[str, str] = {
    **{
        f"agentbus.{name}": f"agentbus.core.{name}"
        for name in (
            "actor",
            "bus",
            "environment",
            "episode",
            "events",
            "mailbox",
            "messages",
            "outcome",
            "record",
            "registry",
        )
    },
    **{
        f"agentbus.{name}": f"agentbus.executors.{name}"
        for name in ("ray_runtime", "remote", "runtime")
    },
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name and loads it as the module at its new path."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was executed under its new name."""


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (idempotent)."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.append(_Alias())
