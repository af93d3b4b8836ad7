"""examples/langgraph (LangGraph review loop) as its README runs it, against its truth.

What is checked and why it can fail: tests/helpers/framework_examples.py. About 30 s
of CPU for the in-process run (640 episodes), 20 s for the command run (8
processes, each importing LangGraph and langchain-openai).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.framework_examples import check_command_agent, check_truth, truth_module

pytestmark = pytest.mark.slow


def no_estimate_route(p: float | None, s: float, c: float | None) -> float:
    """A wrong truth: the critic matching the planner's estimate would end nothing."""
    return float(truth_module("langgraph").success(None, s, c))


def test_readme_run_matches_the_known_truth(tmp_path: Path) -> None:
    check_truth("langgraph", no_estimate_route, tmp_path / "run")


def test_readme_command_agent_honours_switched_off_modules(tmp_path: Path) -> None:
    check_command_agent("langgraph", tmp_path / "run")
