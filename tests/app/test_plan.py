"""``python -m agentbus.plan``: the half-width predicted at the planned size is what a run gets."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attribution.estimators import Estimator
from attribution.estimators.synthetic import agent_like_game
from attribution.power import halfwidth, plan, tasks_for


def test_tasks_for_is_the_smallest_size_under_the_target() -> None:
    for sd in (0.1, 0.3, 0.5):
        t = tasks_for(sd, 0.05)
        assert halfwidth(sd, t) <= 0.05 < halfwidth(sd, t - 1)


def test_predicted_halfwidth_matches_realised_on_a_synthetic_game() -> None:
    """A 30-task pilot's plan for +/-0.05, then 40 runs of the planned size."""
    game = agent_like_game(8, seed=4)
    est = Estimator.make("msr", 8)
    rng = np.random.default_rng(0)
    slots = tuple(f"m{i}" for i in range(8))
    masks = est.design(rng, 30)
    p = plan(est.per_task(masks, game.draw(rng, masks)), slots, 0.05, est)
    predicted = p.predicted(p.tasks)
    realised = []
    for _ in range(40):
        masks = est.design(rng, p.tasks)
        e = est.from_per_task(est.per_task(masks, game.draw(rng, masks)), slots)
        realised.append(e.halfwidths())
    ratio = np.median(np.asarray(realised), axis=0) / predicted
    assert np.all(np.abs(ratio - 1) < 0.2), ratio


def test_plan_refuses_a_directory_without_a_run(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentbus.plan", str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "no pilot run" in done.stderr


@pytest.mark.slow
def test_plan_from_a_math_pilot_predicts_the_extended_run(tmp_path: Path) -> None:
    """Pilot of 30 math tasks, plan for +/-0.1, extend the same run to the planned size.

    The realised widest half-width must be within 20% of the predicted one.
    """
    run = ["--env", "math", "--slots", "planning,action", "--sim-speed", "300", "--seed", "5"]
    plan_cmd = [sys.executable, "-m", "agentbus.plan", str(tmp_path), "--pilot", "30"]
    out = subprocess.run(
        [*plan_cmd, "--target", "0.1", "--", *run],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r"at \+/-0\.1: (\d+) tasks.*predicted widest \+/-([0-9.]+)", out)
    assert found, out
    tasks, predicted = int(found.group(1)), float(found.group(2))
    assert tasks > 30
    where = ["--run-dir", str(tmp_path), "--progress", "off", "--no-plots"]
    subprocess.run(
        [sys.executable, "-m", "agentbus.run", *run, "--tasks", str(tasks), *where],
        capture_output=True,
        check=True,
    )
    results = json.loads((tmp_path / "results.json").read_text())
    shapley = results["models"]["sim:strong"]["shapley"]
    realised = max((v["ci_high"] - v["ci_low"]) / 2 for v in shapley.values())
    print(f"math: {tasks} tasks, predicted +/-{predicted:.4f}, realised +/-{realised:.4f}")
    assert abs(realised / predicted - 1) < 0.2, (realised, predicted, out)
