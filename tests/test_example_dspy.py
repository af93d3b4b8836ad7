"""examples/dspy (planner, chain-of-thought solver, critic, vote) against its truth.

Skipped where DSPy is not installed: installing it into agentbus's
development virtualenv would downgrade python-dateutil (4.0.0 -> 2.9.0.post0),
so the example has a virtualenv of its own (examples/dspy/README.md); run
this file with that virtualenv's Python. What is checked is what
tests/framework_examples.py checks for the other examples: the README's
in-process command on the 80 tasks (640 episodes) against truth.py's exact
v(S) and phi, a wrong truth caught, and the command form honouring a
switched-off critic.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "dspy", reason="DSPy lives in its own virtualenv (examples/dspy/README.md: .venv-dspy)"
)

from framework_examples import check_command_agent, check_truth

pytestmark = pytest.mark.slow


def solver_alone(p: float | None, s: float, c: float | None) -> float:
    """A wrong truth: the solver's answer always stands (no vote)."""
    return s


def test_readme_run_matches_the_known_truth(tmp_path: Path) -> None:
    check_truth("dspy", solver_alone, tmp_path / "run")


def test_readme_command_agent_honours_switched_off_modules(tmp_path: Path) -> None:
    check_command_agent("dspy", tmp_path / "run")
