"""``--stop``, ``--estimator`` and ``--screen`` on the command line; a screened run end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentbus.app.cli_args import parse
from agentbus.core.errors import UserError


def test_stop_rules_make_an_adaptive_run() -> None:
    config = parse(["--stop", "mvp"])
    assert config.adaptive and config.stop == "mvp"
    config = parse(["--stop", "halfwidth", "0.05"])
    assert config.stop == "halfwidth" and config.target_halfwidth == 0.05
    # today's spelling stays: --adaptive --target-halfwidth X is --stop halfwidth X
    config = parse(["--adaptive", "--target-halfwidth", "0.04"])
    assert config.stop == "halfwidth" and config.target_halfwidth == 0.04
    assert parse(["--estimator", "leverage"]).estimator == "leverage"


@pytest.mark.parametrize(
    "argv",
    [["--stop", "fastest"], ["--stop", "mvp", "0.1"], ["--stop", "halfwidth", "wide"]],
)
def test_bad_stop_rules_are_one_line_errors(argv: list[str]) -> None:
    with pytest.raises(UserError):
        parse(argv)
    if argv[1] != "fastest":
        return  # one subprocess shows the one-line exit; the rest are the same code path
    done = subprocess.run(
        [sys.executable, "-m", "agentbus.run", *argv], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--stop" in done.stderr


@pytest.mark.slow
def test_screened_mirror_run_plays_only_the_modules_that_can_matter(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["--preset", "mirror", "--tasks", "12", "--screen", "loo"]
    args += ["--target-halfwidth", "0.3", "--no-plots", "--progress", "off"]
    done = subprocess.run(
        [sys.executable, "-m", "agentbus.run", *args, "--run-dir", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    screen = json.loads((run_dir / "screen.json").read_text())
    results = json.loads((run_dir / "results.json").read_text())
    dropped = screen["models"]["sim:strong"]["dropped"]
    assert dropped, "at +/-0.3 the screen drops the modules that hardly matter"
    assert results["slots"] == screen["kept"]
    assert not set(dropped) & set(results["slots"])
    assert (tmp_path / "run.screen" / "results.json").exists()
