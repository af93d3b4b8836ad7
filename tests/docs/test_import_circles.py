"""No import circles among the project's own modules, checked from the source.

A circle (a imports b, b imports a, directly or through others) means neither
module can be read, tested or moved alone, and it works only as long as the
import order happens to suit it. The check reads every ``import`` and ``from``
statement of agentbus, attribution, modules and environments with :mod:`ast`:
imports inside functions and under ``if TYPE_CHECKING`` count too, because a
circle that is hidden from the interpreter is still one for the reader. The
one exception is a package's ``__init__.py`` block under ``TYPE_CHECKING``:
that is the lazily exported public API (``agentbus/__init__.py``), which names
every public module on purpose and runs none of them.

Circles that were there before this test are listed in :data:`KNOWN`, so the
test fails on any new one; remove an entry when its circle is gone.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agentbus", "attribution", "modules", "environments")

#: circles outside environments/ that existed when this test was written (issue 44);
#: each is a set of modules that import each other. Shrink this list, never grow it.
KNOWN: list[frozenset[str]] = []


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """Line numbers of the statements inside top-level ``if TYPE_CHECKING:`` blocks."""
    lines: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.stmt):
                        lines.add(sub.lineno)
    return lines


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The project modules that ``path`` imports (``from p import m`` binds ``p.m``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip = _type_checking_lines(tree) if path.name == "__init__.py" else set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, module] if module else base)
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                if sub in known:
                    out.add(sub)
                elif module in known:
                    out.add(module)
    out.discard(name)
    return out


def import_graph() -> nx.DiGraph:
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    names = {module_name(p): p for p in files}
    graph = nx.DiGraph()
    graph.add_nodes_from(names)
    for name, path in names.items():
        graph.add_edges_from((name, target) for target in imported_modules(path, set(names)))
    return graph


def circles(graph: nx.DiGraph) -> list[frozenset[str]]:
    """Each group of modules that reach each other through imports (two or more)."""
    return [frozenset(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def test_no_new_import_circles() -> None:
    new = [c for c in circles(import_graph()) if c not in KNOWN]
    assert not new, "new import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in new)


def test_the_check_sees_a_circle(tmp_path: Path) -> None:
    """A two-module circle through a function-level import is found."""
    graph = nx.DiGraph([("a", "b"), ("b", "a"), ("b", "c")])
    assert circles(graph) == [frozenset({"a", "b"})]
    pkg = ROOT / "environments"
    known = {"environments.navigation.route", "environments.navigation.constraints"}
    found = imported_modules(pkg / "navigation" / "route.py", known)
    assert found == {"environments.navigation.constraints"}
