"""``python -m agentbus.list`` and ``--help`` name everything a run can name (issue 32 item 7).

Run as a user would, in a subprocess: the lists come from the registry's entry
points, so every built-in environment, module, agent, preset and backend must
appear, and a plugin registered through an entry point would too.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from agentbus.core import registry


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("kind", "group"),
    [
        ("envs", "environments"),
        ("modules", "modules"),
        ("agents", "agents"),
        ("presets", "presets"),
        ("backends", "backends"),
    ],
)
def test_list_names_every_entry_point(kind: str, group: str) -> None:
    result = _run("agentbus.list", kind)
    assert result.returncode == 0, result.stderr
    listed = {line.split()[0] for line in result.stdout.splitlines() if line.strip()}
    declared = {ep.name for ep in entry_points(group=registry.GROUPS[group])}
    assert declared, group
    assert declared <= listed, declared - listed


def test_list_envs_describes_and_marks_the_fixture() -> None:
    out = _run("agentbus.list", "envs").stdout
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert "sandbox" in lines["os"]
    assert "demo" not in lines  # the countdown fixture is no plugin
    assert "not runnable" not in lines["math"]
    verbose = _run("agentbus.list", "envs", "--verbose").stdout
    assert "from environments.math.env:MathEnvironment" in verbose


def test_list_unknown_kind_is_one_clear_error() -> None:
    result = _run("agentbus.list", "planets")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_help_names_every_runnable_environment() -> None:
    help_text = " ".join(_run("agentbus.run", "--help").stdout.split())
    for name in ("atp", "git", "math", "navigation", "os", "robot", "shopping", "ticket", "tools"):
        assert f"{name}," in help_text or f"{name}, or" in help_text, name
    assert "demo," not in help_text
    assert "agentbus.list envs" in help_text
