"""examples/autogen (an AgentChat team: a tool, structured output, a vote) against its truth.

Skipped where AutoGen is not installed (CI's ``[dev]`` virtualenv does not
have it): install it as examples/autogen/README.md says and run this file
with that virtualenv's Python
(``.venv-autogen/bin/python -m pytest tests/examples/test_example_autogen.py``).

The README's in-process command on the first 16 tasks (128 episodes, every
coalition of planner/solver/critic), through the real path: AutoGen ->
gateway -> router -> simulator. No episode fails (the solver's tool call
and its reflection, the critic's JSON-schema answer parsed into ``Review``),
every coalition is within 3.5 binomial standard errors of truth.py's exact
v(S), and a wrong truth (the vote's tie going to the solver rather than to
the last speaker) is caught by the same check. The command form (``slow``)
honours a switched-off critic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("autogen_agentchat", reason="AutoGen is not installed (examples/autogen)")

from tests.helpers.framework_examples import SLOTS, check_command_agent, check_first_tasks


def ties_to_solver(ask: Callable[[str], str]) -> str | None:
    """A wrong truth: with no two agents agreeing, the solver's answer."""
    answers = {m: ask(m) for m in SLOTS}
    value, n = Counter(answers.values()).most_common(1)[0]
    return value if n >= 2 else answers["solver"]


def test_readme_run_matches_the_known_truth(tmp_path: Path) -> None:
    solver = 2  # its calculator call, then its reflection on the result
    calls = {"planner": 1, "solver": solver, "critic": 1}
    check_first_tasks("autogen", 16, ties_to_solver, tmp_path / "run", calls)


@pytest.mark.slow
def test_readme_command_agent_honours_switched_off_modules(tmp_path: Path) -> None:
    check_command_agent("autogen", tmp_path / "run")
