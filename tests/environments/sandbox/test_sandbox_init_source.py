"""The sandbox's init is two files joined into one ``python3 -I -S -c`` program.

Nothing of agentbus is importable inside the sandbox, so the joined program
must not import the package, must keep ``from __future__`` only at its top
(anywhere else it is a syntax error), and must define every name of
``init_procs.py`` that ``init.py`` imports for its linters.
"""

from __future__ import annotations

import ast

from environments.sandbox import init as init_module
from environments.sandbox import init_procs
from environments.sandbox.supervisor import init_source


def test_joined_init_is_one_stdlib_program() -> None:
    source = init_source()
    tree = ast.parse(source)
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "environments" not in imported and "agentbus" not in imported
    assert source.count("from __future__ import annotations") == 1
    compile(source, "init", "exec")


def test_joined_init_defines_what_init_uses() -> None:
    defined = {
        target.id if isinstance(target, ast.Name) else getattr(target, "name", "")
        for node in ast.parse(init_source()).body
        for target in (
            node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", node)]
        )
    }
    shared = [n for n in vars(init_procs) if n.isupper() or callable(vars(init_procs)[n])]
    used = [n for n in shared if vars(init_module).get(n) is vars(init_procs)[n]]
    assert used and set(used) <= defined
