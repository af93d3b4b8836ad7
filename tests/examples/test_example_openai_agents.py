"""examples/openai_agents (OpenAI Agents SDK, handoffs) as its README runs it, against its truth.

What is checked and why it can fail: tests/helpers/framework_examples.py. About 30 s
of CPU for the in-process run (640 episodes), 20 s for the command run (8
processes, each importing the SDK).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.framework_examples import check_command_agent, check_truth

pytestmark = pytest.mark.slow


def misread_vote(p: float | None, s: float, c: float | None) -> float:
    """A wrong truth: without a majority the critic's answer (not the solver's) stands."""
    if p is None or c is None:
        return s
    return c + (1 - c) * p * s


def test_readme_run_matches_the_known_truth(tmp_path: Path) -> None:
    check_truth("openai_agents", misread_vote, tmp_path / "run")


def test_readme_command_agent_honours_switched_off_modules(tmp_path: Path) -> None:
    check_command_agent("openai_agents", tmp_path / "run")
