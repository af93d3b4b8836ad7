"""A run on sim: models whose environment has no usable expert stops in one line.

Without an expert the simulator recognises none of the tasks, every answer
is a guess and the run used to finish with every value 0.00 and exit 0. Both
ways to get there are refused before anything is written: no expert
registered for the environment, and an expert whose ``env`` names another
environment (a typo: its task index finds nothing).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentbus.app.run import main
from agentbus.core import registry

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "envkit_demo"


@pytest.fixture
def tally() -> Iterator[type]:
    """The example environment registered as ``tally``, with no expert yet."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        from tally_env import TallyEnvironment
        from tally_expert import TallyExpert

        registry.register("environments", "tally", TallyEnvironment)
        yield TallyExpert
    finally:
        registry.unregister("environments", "tally")
        sys.path.remove(str(EXAMPLE))


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    argv = ["--env", "tally", "--tasks", "2", "--sim-speed", "0", "--progress", "off"]
    code = main([*argv, "--run-dir", str(tmp_path / "run")])
    return code, capsys.readouterr().err.strip()


def test_no_expert_stops_in_one_line_naming_those_that_have_one(
    tally: type, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(tmp_path, capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert "no simulated expert for environment 'tally'" in err
    assert "math, navigation" in err  # the ones that have one, sorted
    assert not (tmp_path / "run").exists()


def test_expert_for_another_env_name_stops(
    tally: type, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = type("TypoExpert", (tally,), {"env": "taly"})
    registry.register("experts", "tally", typo)
    try:
        code, err = run(tmp_path, capsys)
    finally:
        registry.unregister("experts", "tally")
    assert code == 2 and len(err.splitlines()) == 1
    assert "sets env = 'taly'" in err and "set env = 'tally'" in err


def test_a_task_count_below_one_has_one_message() -> None:
    """The kit's generator count, ``agentbus.sim.serve`` and ``discover`` say it alike."""
    from agentbus.app.discover import config_of, parser
    from agentbus.core.environment import TaskSource
    from agentbus.core.errors import UserError
    from agentbus.envkit.tasks import generated_count
    from agentbus.sim.serve import task_source

    said = []
    for attempt in (
        lambda: generated_count(TaskSource(count=0), "tally"),
        lambda: task_source(None, None, tasks=0),
        lambda: config_of(parser().parse_args(["--agent", "m:f", "--env", "math", "--tasks", "0"])),
    ):
        with pytest.raises(UserError) as caught:
            attempt()
        said.append(str(caught.value))
    assert said == ["--tasks must be at least 1 (got 0)"] * 3
