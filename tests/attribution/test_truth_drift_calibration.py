"""The drift test keeps its 1% at every run size and sees a coherent shift.

``truth compare`` used to flag a run when max |z| passed a Bonferroni bound
under a normal approximation, with the block variance scaled by 30/n. On
tiny runs that approximation fails (a 2-task mean of 0/1 outcomes takes three
values; tools' all-default coalition succeeds 0.8% of the time), and it
flagged 15% of honest 2-task tools runs; and a change that moves every
coalition a little mostly passed it. The thresholds are now simulated from
the table at the run's size, and a mean-shift test sits beside max |z|.

Honest runs here are real per-task outcomes of the simulator
(tests/data/per_task: tools and navigation, where the old test failed),
drawn as a run is made: T distinct tasks of one 30-task block (one
generator seed), tested against the table with the pool's own means as the
truth. ``python benchmarks/truth_drift.py
--calibration`` prints the full table (docs/statistics.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agentbus.sim.truth import table as tables
from agentbus.sim.truth.drift import drift

POOLS = Path(__file__).resolve().parents[1] / "data" / "per_task"
RUNS = 300


def _pool(env: str) -> tuple[list[str], np.ndarray, list[np.ndarray], tables.TruthTable]:
    pool = np.load(POOLS / f"{env}.npz")
    keys = [str(k) for k in pool["keys"]]
    rewards = pool["rewards"].astype(float)
    table = tables.load(env, "sim:weak", "sim:strong")
    values = {
        k: table.values[k].model_copy(update={"mean": float(rewards[:, i].mean())})
        for i, k in enumerate(keys)
    }
    blocks = [np.flatnonzero(pool["seeds"] == s) for s in np.unique(pool["seeds"])]
    return keys, rewards, blocks, table.model_copy(update={"values": values})


@pytest.mark.parametrize("env", ["tools", "navigation"])
def test_honest_small_runs_are_flagged_about_one_percent_of_the_time(env: str) -> None:
    keys, rewards, blocks, truth = _pool(env)
    rng = np.random.default_rng(11)
    for size in (2, 3, 5, 10):
        flagged = 0
        for _ in range(RUNS):
            rows = rng.choice(blocks[rng.integers(len(blocks))], size, replace=False)
            means = rewards[rows].mean(axis=0)
            flagged += drift(
                truth, {k: (size, float(means[i])) for i, k in enumerate(keys)}, keys
            ).alarm
        # a 1% test flags 10 or more of 300 with probability 0.001 (the old test: 61 of
        # 400 2-task tools runs, 20 navigation ones; math's pool is in the benchmark)
        assert flagged < 10, (env, size, flagged)


def test_a_coherent_shift_is_flagged_where_no_single_coalition_stands_out() -> None:
    table = tables.load("math", "sim:weak", "sim:strong")
    keys = list(table.values)
    moved = drift(table, {k: (30, min(1.0, v.mean + 0.2)) for k, v in table.values.items()}, keys)
    assert moved.max_z < 3.2 < moved.threshold  # no coalition is far off on its own
    assert moved.shift == pytest.approx(0.2, abs=0.01) and moved.alarm
    down = drift(table, {k: (30, max(0.0, v.mean - 0.2)) for k, v in table.values.items()}, keys)
    assert down.shift_z < -down.shift_threshold and down.alarm
