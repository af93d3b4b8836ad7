"""The layout is the architecture: which part may import which, checked from the source.

Arrows point one way (docs/architecture.md): ``modules``, ``environments`` and
``attribution`` build on the ``agentbus`` kernel; the run store
(``agentbus.runs``) sits above the kernel; the application (``agentbus.app``)
composes everything and nothing below it imports it. A plugin imports
``agentbus`` names only from the top-level package, the plugin API, so the
kernel's internal modules can move without breaking a plugin. These tests read
every import statement (with :mod:`ast`, so docstrings and comments that mention
a module do not count, and imports inside functions do) and fail with the file,
line and import that break a rule.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENTBUS = ROOT / "agentbus"

#: The top-level ``python -m agentbus.run/report/tail/truth`` entry shims delegate
#: to the application by design; they are not kernel files.
ENTRY_SHIMS = {
    "run.py",
    "report.py",
    "tail.py",
    "truth.py",
    "truth_cost.py",
    "view.py",
    "export.py",
    "plan.py",
    "discover.py",
    "list.py",
    "blame.py",
    "sandbox.py",
    "serve_vllm.py",
    "__main__.py",
}


def _python_files(*parts: str) -> list[Path]:
    files: list[Path] = []
    for part in parts:
        files.extend(sorted((ROOT / part).rglob("*.py")))
    return files


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    names = list(rel.parts)
    if names[-1] == "__init__":
        names.pop()
    return ".".join(names)


def imports_of(path: Path, package: str | None = None) -> Iterator[tuple[int, str, list[str]]]:
    """Yield ``(line, imported module, imported names)`` for every import in ``path``.

    Relative imports are resolved against the file's package (``package``, or the
    one its place under the repository says) so ``from . import x`` cannot slip
    past a rule.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    if package is None:
        package = _module_name(path)
        if path.name != "__init__.py":
            package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, module] if module else base)
            yield node.lineno, module, [alias.name for alias in node.names]


def _targets(module: str, names: list[str]) -> list[str]:
    """The modules an import can bind: ``from agentbus import app`` binds ``agentbus.app``."""
    return [module, *(f"{module}.{name}" for name in names)]


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _violations(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in files:
        for line, module, names in imports_of(path):
            for target in _targets(module, names):
                if any(_under(target, prefix) for prefix in forbidden):
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
                    break
    return bad


def kernel_files() -> list[Path]:
    """Every file of the kernel: agentbus/ without its app/ and runs/ wings and entry shims."""
    files = []
    for path in sorted(AGENTBUS.rglob("*.py")):
        rel = path.relative_to(AGENTBUS)
        if rel.parts[0] in ("app", "runs"):
            continue
        if len(rel.parts) == 1 and rel.name in ENTRY_SHIMS:
            continue
        files.append(path)
    return files


def test_the_layout_has_its_wings() -> None:
    assert (AGENTBUS / "app" / "__init__.py").is_file()
    assert (AGENTBUS / "runs" / "__init__.py").is_file()
    assert (AGENTBUS / "runs" / "static" / "index.html").is_file()
    kernel = {p.relative_to(AGENTBUS).as_posix() for p in kernel_files()}
    assert "core/episode.py" in kernel and "llm/router.py" in kernel and "sim/model.py" in kernel


def test_the_kernel_imports_neither_the_application_nor_the_run_store_nor_plugins() -> None:
    forbidden = ("agentbus.app", "agentbus.runs", "modules", "environments", "attribution")
    assert _violations(kernel_files(), forbidden) == []


def test_the_run_store_does_not_import_the_application() -> None:
    assert _violations(_python_files("agentbus/runs"), ("agentbus.app",)) == []


def test_the_llm_layer_does_not_import_the_simulator() -> None:
    assert _violations(_python_files("agentbus/llm"), ("agentbus.sim",)) == []


@pytest.mark.parametrize("part", ["attribution", "modules", "environments"])
def test_libraries_and_plugins_do_not_import_the_application(part: str) -> None:
    assert _violations(_python_files(part), ("agentbus.app", "agentbus.runs")) == []


@pytest.mark.parametrize("part", ["modules", "environments"])
def test_plugins_import_agentbus_names_only_from_the_top_level_package(part: str) -> None:
    bad = []
    for path in _python_files(part):
        for line, module, _names in imports_of(path):
            if module != "agentbus" and _under(module, "agentbus"):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert bad == []


def test_the_package_root_imports_only_the_kernel() -> None:
    """``import agentbus`` (the plugin API) must not drag in the application or the store."""
    forbidden = ("agentbus.app", "agentbus.runs", "agentbus.run", "agentbus.report")
    assert _violations([AGENTBUS / "__init__.py"], forbidden) == []


def test_the_checker_resolves_relative_and_nested_imports(tmp_path: Path) -> None:
    """The rules are only as good as the parser: relative and in-function imports count."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from . import app\nfrom ..runs import store\ndef f():\n    import agentbus.app.run\n",
        encoding="utf-8",
    )
    found = [(line, module, names) for line, module, names in imports_of(probe, "agentbus.sim")]
    assert found == [
        (1, "agentbus.sim", ["app"]),
        (2, "agentbus.runs", ["store"]),
        (4, "agentbus.app.run", []),
    ]


def test_the_core_imports_no_executor() -> None:
    """Executors run the kernel's episodes; the kernel never reaches back up to them."""
    core = _python_files("agentbus/core")
    assert any(path.name == "episode.py" for path in core)
    assert _violations(core, ("agentbus.executors",)) == []
