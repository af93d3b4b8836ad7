"""One path for every import: the kernel's pre-``core/`` module names are gone.

The compatibility layers that answered ``agentbus.events`` or
``from agentbus import runtime`` with the moved module (a ``sys.meta_path``
finder and a table in ``agentbus/__init__.py``) protected only this
repository's own imports at version 0.1.0, and had already drifted apart.
They are retired: a module has the one path it lives at, and the top-level
``agentbus`` names are the public API (``agentbus.Episode``, ...), not modules.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import agentbus

ROOT = Path(__file__).resolve().parents[2]

OLD = ["actor", "bus", "environment", "episode", "events", "mailbox", "messages"]
OLD += ["outcome", "record", "ray_runtime", "remote", "runtime"]
#: helpers that sat at the package root beside the commands, now in their layer
#: (core/, llm/, gateway/, runs/, app/); ``export`` and ``serve_vllm`` stay as commands
OLD += ["answers", "calltrace", "coalitions", "demo", "errors", "inputs", "interrupt", "labels"]
OLD += ["listener", "logs", "machine", "pipes", "refusals", "runnable", "variants"]


@pytest.mark.parametrize("name", OLD)
def test_an_old_kernel_path_no_longer_imports(name: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"agentbus.{name}")
    assert not hasattr(agentbus, name)


def test_the_public_names_and_the_real_paths_still_import_in_a_fresh_process() -> None:
    code = (
        "import agentbus.core.messages as m, agentbus.core.events as e\n"
        "from agentbus import EventHub, Plan, Runtime, registry\n"
        "import agentbus.executors.runtime as r\n"
        "assert Plan is m.Plan and EventHub is e.EventHub and Runtime is r.Runtime\n"
        "import sys; assert not any(type(f).__name__ == '_Alias' for f in sys.meta_path)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


#: packages whose ``__init__`` is an API gathering their own modules' names on purpose
#: (agentbus: the plugin API; attribution and environments.sandbox: the libraries')
API_PACKAGES = {
    "agentbus/__init__.py",
    "attribution/__init__.py",
    "environments/sandbox/__init__.py",
    "environments/robot/rules/__init__.py",
}


def re_exports(path: Path) -> list[str]:
    """The names in ``__all__`` that the module only imports (a second path to them)."""
    imported: set[str] = set()
    defined: set[str] = set()
    listed: list[str] = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            imported |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name) and target.id == "__all__":
                    listed = [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[union-attr]
                elif isinstance(target, ast.Name):
                    defined.add(target.id)
    return [name for name in listed if name in imported - defined]


def test_no_module_re_exports_what_it_imports(tmp_path: Path) -> None:
    """A split file moves its callers; it does not list the moved names in ``__all__``."""
    found = {
        path.relative_to(ROOT).as_posix(): names
        for part in ("agentbus", "attribution", "modules", "environments")
        for path in sorted((ROOT / part).rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in API_PACKAGES and (names := re_exports(path))
    }
    assert found == {}
    probe = tmp_path / "probe.py"
    probe.write_text("from x import moved\n\ndef own(): ...\n\n__all__ = ['moved', 'own']\n")
    assert re_exports(probe) == ["moved"]
