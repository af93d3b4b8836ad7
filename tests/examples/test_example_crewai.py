"""examples/crewai (solver and reviewer agents, a cross-check) against its truth (issue 50).

Skipped where CrewAI is not installed: it pins the openai SDK's generation
2 and agentbus's development virtualenv has generation 3, so the example has
a virtualenv of its own (examples/crewai/README.md); run this file with that
virtualenv's Python. Before issue 50 the crew's final output (CrewAI's
prose ending in ``ANSWER: n``) was scored wrong by the default scorer in
every episode; now the README's in-process command on 16 tasks (64
episodes) has every coalition within 3.5 binomial standard errors of
truth.py's exact v(S), with no agent failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("crewai", reason="CrewAI lives in its own virtualenv (.venv-crewai)")

from tests.helpers.cli_run import ended_episodes
from tests.helpers.framework_examples import readme_command, run, truth_module

TASKS = 16


def test_readme_run_matches_the_known_truth(tmp_path: Path) -> None:
    truth = truth_module("crewai")
    argv = [*readme_command("crewai", "--agent"), "--limit", str(TASKS)]
    results = run(argv, tmp_path / "run")
    episodes = ended_episodes(tmp_path / "run")
    assert len(episodes) == TASKS * 4
    for e in episodes:
        assert "agent_error" not in e["outcome"]["details"], e["outcome"]["details"]
    for key, exact in {"+".join(c): v for c, v in truth.values().items()}.items():
        cell = results["models"]["sim:strong"]["coalitions"][key]
        se = max((exact * (1 - exact) / cell["tasks"]) ** 0.5, 1e-9)
        assert abs(cell["mean"] - exact) < 3.5 * se, (key, cell, exact)
