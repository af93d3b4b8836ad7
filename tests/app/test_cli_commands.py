"""One ``agentbus`` console script with every command; ``python -m agentbus.X`` still works.

The table in agentbus/app/cli.py is the one list of commands. Each entry file
at the package root (``agentbus/run.py``, ``truth_cost.py``, ...: the files
``python -m agentbus.X`` runs) must have its row, running the very same
``main``, so a new command cannot be reachable one way and not the other.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from agentbus.app.cli import COMMANDS, command_main, main

PACKAGE = Path(__file__).resolve().parents[2] / "agentbus"


def entry_files() -> list[Path]:
    """The root files that run a command under ``python -m`` (they end in a __main__ block)."""
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name == "__main__.py":
            continue
        tree = ast.parse(path.read_text())
        if any(
            isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body
        ):
            found.append(path)
    return found


def test_every_python_m_command_is_an_agentbus_command_running_the_same_main() -> None:
    files = entry_files()
    assert len(files) >= 12
    for path in files:
        name = path.stem.replace("_", "-")
        assert name in COMMANDS, f"agentbus/{path.name} has no row in agentbus/app/cli.py"
        module = __import__(f"agentbus.{path.stem}", fromlist=["main"])
        assert command_main(name) is module.main, name


#: root files that are no command: the package, ``python -m agentbus``, and safepath,
#: which must run before anything else is imported (agentbus/__init__.py)
NOT_COMMANDS = {"__init__.py", "__main__.py", "safepath.py"}


def test_the_root_holds_only_the_command_entry_points() -> None:
    """Helpers live in their layer; an entry file only imports its command's ``main``."""
    entries = entry_files()
    helpers = {p.name for p in PACKAGE.glob("*.py")} - {p.name for p in entries} - NOT_COMMANDS
    assert not helpers, f"helpers at the agentbus/ root (move them into a layer): {sorted(helpers)}"
    for path in entries:
        imports = [n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ImportFrom)]
        assert [[a.name for a in n.names] for n in imports] == [["main"]], path.name


def test_help_lists_every_command_and_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert all(f"  {name} " in shown for name in COMMANDS)
    assert main([]) == 2
    capsys.readouterr()
    assert main(["nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unknown command 'nope'" in err and "truth-cost" in err


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_answers_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([name, "--help"])
    assert done.value.code == 0
    assert "usage:" in capsys.readouterr().out.lower()


def test_the_console_script_and_python_m_agentbus_are_this_table() -> None:
    script = Path(sys.executable).with_name("agentbus")
    for argv in ([str(script), "--help"], [sys.executable, "-m", "agentbus", "--help"]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "truth-cost" in done.stdout and "serve-vllm" in done.stdout
