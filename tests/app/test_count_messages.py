"""A count below 1 says the same line from the command line and from a run config file.

``--tasks 0`` and ``tasks = 0`` in ``--config FILE`` both go through the run
config's validation; the rule for a count is core.environment.check_count
(``--tasks must be at least 1 (got 0)``), also what the environment kit,
``agentbus.sim.serve`` and ``agentbus.discover`` say
(tests/environments/test_envkit_checks.py). Before, the run said pydantic's
"Input should be greater than or equal to 1", naming neither flag nor value.
"""

from __future__ import annotations

import importlib
import typing
from pathlib import Path

import pytest
from annotated_types import Ge

from agentbus.app.cli_args import parser
from agentbus.app.config import CONFIG_ONLY_COUNTS, RunConfig
from agentbus.app.run import main


def said(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*argv, "--no-preflight"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(("key", "value"), [("tasks", 0), ("limit", -2), ("repeats", 0)])
def test_a_count_below_one_reads_alike_from_flag_and_file(
    key: str, value: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.toml"
    config.write_text(f"{key} = {value}\n")
    flag = "--" + key
    from_flag = said([flag, str(value)], capsys)
    from_file = said(["--config", str(config)], capsys)
    assert from_flag == from_file == f"agentbus: error: {flag} must be at least 1 (got {value})"


def test_a_config_only_count_is_named_by_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.toml"
    config.write_text("attempts = 0\n")
    assert said(["--config", str(config)], capsys).endswith("attempts must be at least 1 (got 0)")


def test_every_count_is_a_flag_or_listed_as_config_only() -> None:
    """The message names ``--KEY``: that flag must exist, or the key is config-only."""
    flags = {s for action in parser()._actions for s in action.option_strings}
    counts = {
        name
        for name, field in RunConfig.model_fields.items()
        if any(isinstance(m, Ge) and m.ge == 1 for m in field.metadata)
        and int in (*typing.get_args(field.annotation), field.annotation)
    }
    assert {"tasks", "limit", "repeats", "attempts"} <= counts
    for name in counts:
        has_flag = "--" + name.replace("_", "-") in flags
        assert has_flag != (name in CONFIG_ONLY_COUNTS), name


@pytest.mark.parametrize("command", ["agentbus.app.truth", "agentbus.app.truth_cost"])
def test_truth_make_says_it_alike(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``truth make`` and ``truth_cost make`` said '--tasks must be positive, --workers 1-64'."""
    run = importlib.import_module(command).main
    assert run(["make", "--tasks", "0"]) == 2
    assert capsys.readouterr().err.strip() == "error: --tasks must be at least 1 (got 0)"
