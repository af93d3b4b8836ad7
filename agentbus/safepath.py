"""Safe-path start: agentbus never imports code from a folder it did not install.

``python -m agentbus.X`` puts the current directory first on ``sys.path``, so
a file dropped there (by an agent, or anyone) named like a module agentbus
imports later, lazily, would run inside agentbus with its environment: the
provider keys. :func:`drop_start_dir` removes that entry as Python 3.11's
``-P`` (``PYTHONSAFEPATH``) does; ``agentbus/__init__.py`` calls it first
thing, so every ``python -m agentbus.X`` command goes through it before
anything else is imported (the ``agentbus`` console script starts from its
own bin folder, never from the current directory).

A module the user names on the command line (``--agent mymod:run``,
``--scorer mymod:fn``) is the user's choice: :func:`import_named` looks for
it in the start directory too, for that one import only.
"""

# no ``from __future__``: that too is a module, looked up on ``sys.path`` (cwd first)
import importlib
import os
import sys
from types import ModuleType

#: the directory ``python -m`` put first on ``sys.path`` (None when nothing was dropped)
START_DIR: str | None = None


def drop_start_dir() -> None:
    """Remove the current directory that ``python -m`` put first on ``sys.path``."""
    global START_DIR
    if sys.flags.safe_path or sys.argv[:1] != ["-m"] or not sys.path:
        return  # not a ``python -m`` start, or Python already left it out
    first = sys.path[0]
    try:
        same = first in ("", ".") or os.path.samefile(first, os.getcwd())
    except OSError:
        same = False
    if same:
        START_DIR = os.path.abspath(first or ".")
        del sys.path[0]


def import_named(name: str) -> ModuleType:
    """Import a module the user named, looking in the start directory too if need be."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        top = name.partition(".")[0]
        if START_DIR is None or exc.name not in (top, name) or START_DIR in sys.path:
            raise
    sys.path.insert(0, START_DIR)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(START_DIR)


__all__ = ["START_DIR", "drop_start_dir", "import_named"]
