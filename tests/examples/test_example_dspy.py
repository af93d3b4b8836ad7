"""examples/dspy (planner, chain-of-thought solver, critic, vote) against its truth.

Skipped where DSPy is not installed (CI's ``[dev]`` virtualenv does not have
it: ``pip install -e '.[dev]' dspy==3.4.1`` resolves without changing a
package, but the runs below would cost the suite more than it has; the
benchmark ``python benchmarks/frameworks_first_table.py`` installs it into a
scratch virtualenv). What is checked for program.py is what
tests/helpers/framework_examples.py checks for the other examples: the README's
in-process command on the 80 tasks (640 episodes) against truth.py's exact
v(S) and phi, a wrong truth caught, and the command form honouring a
switched-off critic (both ``slow``).

Issue 50: typed.py, the same program with typed outputs (float, bool,
list[str], a Literal enum and a nested pydantic model), on 16 tasks in
process: no episode fails DSPy's parser (before: every episode raised
``AdapterParseError``, the simulator writing prose into every field but the
answer), and every coalition is within 3.5 binomial standard errors of the
same truth.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dspy", reason="DSPy is not installed (pip install dspy==3.4.1)")

from tests.helpers.cli_run import ended_episodes
from tests.helpers.framework_examples import (
    check_command_agent,
    check_truth,
    readme_command,
    run,
    truth_module,
    values,
    z_scores,
)

TYPED_TASKS = 16


def solver_alone(p: float | None, s: float, c: float | None) -> float:
    """A wrong truth: the solver's answer always stands (no vote)."""
    return s


@pytest.mark.slow
def test_readme_run_matches_the_known_truth(tmp_path: Path) -> None:
    check_truth("dspy", solver_alone, tmp_path / "run")


@pytest.mark.slow
def test_readme_command_agent_honours_switched_off_modules(tmp_path: Path) -> None:
    check_command_agent("dspy", tmp_path / "run")


def test_typed_fields_parse_and_match_the_known_truth(tmp_path: Path) -> None:
    argv = [*readme_command("dspy", "--agent"), "--limit", str(TYPED_TASKS)]
    argv[argv.index("examples.dspy.program:run")] = "examples.dspy.typed:run"
    results = run(argv, tmp_path / "run")
    episodes = ended_episodes(tmp_path / "run")
    assert len(episodes) == TYPED_TASKS * 8
    for e in episodes:
        assert "agent_error" not in e["outcome"]["details"], e["outcome"]["details"]
    z = z_scores(
        results["models"]["sim:strong"]["coalitions"], values(truth_module("dspy").success)
    )
    assert max(abs(x) for x in z.values()) < 3.5, z
