"""examples/pydantic_ai (delegation, typed outputs, a critic's cross-check) against its truth.

Skipped where pydantic-ai is not installed (CI's ``[dev]`` virtualenv does
not have it): install it as examples/pydantic_ai/README.md says and run this
file with that virtualenv's Python
(``.venv-pydantic_ai/bin/python -m pytest tests/examples/test_example_pydantic_ai.py``).

The README's in-process command on the first 16 tasks (128 episodes, every
coalition of planner/solver/critic), through the real path: pydantic-ai ->
gateway -> router -> simulator. No episode fails (before issue 50 every one
did: the simulator filled the critic's ``Literal`` field of pydantic-ai's
``final_result`` tool with ``""`` and repeated the solver's whole JSON
report as the planner's answer, so validation failed and the run stopped as
misconfigured), every coalition is within 3.5 binomial standard errors of
truth.py's exact v(S), and a wrong truth (a planner that ignores its
worker's report) is caught by the same check. The command form (``slow``)
honours a switched-off critic.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed (examples/pydantic_ai)")

from tests.helpers.framework_examples import check_command_agent, check_first_tasks


def ignores_worker(ask: Callable[[str], str]) -> str | None:
    """A wrong truth: the planner proposes its own answer, never its worker's report."""
    ask("solver")
    proposal, check = ask("planner"), ask("critic")
    return proposal if check == proposal else None


def test_readme_run_matches_the_known_truth(tmp_path: Path) -> None:
    # planner: delegation, final_result; solver: calculate, final_result (no output retried)
    calls = {"planner": 2, "solver": 2, "critic": 1}
    check_first_tasks("pydantic_ai", 16, ignores_worker, tmp_path / "run", calls)


@pytest.mark.slow
def test_readme_command_agent_honours_switched_off_modules(tmp_path: Path) -> None:
    check_command_agent("pydantic_ai", tmp_path / "run")
