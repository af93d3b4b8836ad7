"""Every interval lies within the range its quantity can take (issue 42, item 1).

A Shapley or Banzhaf value of a reward in [0, 1] lies in [-1, 1] and a
pairwise interaction in [-2, 2]; a 2-task run printed [-3.67, 3.67] and 14 of
584 bounds at 5 tasks lay outside [-1, 1]. The bounds are now clipped into
the range (attribution.estimates.Estimates.limits). Clipping cannot lose the
truth, which is inside the range, so the coverage measured by
tests/attribution/test_interval_coverage.py is unchanged; here it is checked hit for hit
on the stored per-task outcomes, and the test fails if the clip is removed
(bounds outside the range are common at 2-5 tasks).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attribution.exact import banzhaf_values, interaction_values, shapley_values
from attribution.game import Game
from attribution.replicate import draw_rows, load_pool, per_task_shapley, shapley_by_permutations
from attribution.variance import per_task_bounds

POOLS = Path(__file__).parents[1] / "data" / "per_task"


def two_task_game() -> Game:
    """Two tasks on which one slot flips the reward: a t interval on 1 df is huge."""
    game = Game(("planning", "reasoning"))
    for task, lucky in (("a", True), ("b", False)):
        for mask in range(4):
            reward = 1.0 if (mask & 2 and lucky) or mask == 3 else 0.0
            game.add_mask(mask, task, reward)
    return game


def test_a_two_task_run_prints_intervals_inside_the_range() -> None:
    game = two_task_game()
    for est, (lo, hi) in (
        (shapley_values(game), (-1.0, 1.0)),
        (banzhaf_values(game), (-1.0, 1.0)),
        (interaction_values(game), (-2.0, 2.0)),
    ):
        raw_low, raw_high = est.raw_bounds()
        assert raw_low.min() < lo or raw_high.max() > hi  # the case the issue saw
        for row in est:
            for bound in (row.ci_low, row.ci_high, row.cs_low, row.cs_high):
                assert lo <= bound <= hi, (est.kind, row)
            assert row.ci_low <= row.value <= row.ci_high
        # stopping rules read the unclipped width: clipping must not stop a run sooner
        assert np.allclose(est.halfwidths(), (raw_high - raw_low) / 2.0)


def test_cost_intervals_are_not_clipped() -> None:
    """A cost's Shapley value has no range of [-1, 1]: its game keeps its own bounds."""
    game = Game(("planning", "reasoning"), unit_interval=False)
    for task, scale in (("a", 3.0), ("b", 9.0), ("c", 1.0)):
        for mask in range(4):
            game.add_mask(mask, task, scale * (1 + bin(mask).count("1")))
    est = shapley_values(game)
    assert est.limits is None and est.ci_high.max() > 1.0


def test_clipping_keeps_every_hit_and_removes_every_bound_outside() -> None:
    """2,000 runs of 2, 3 and 5 stored tasks per environment: the same hits, bounds in range."""
    outside = 0
    for env in ("math", "tools"):
        pool = load_pool(POOLS / f"{env}.npz")
        phi = per_task_shapley(pool, "reward")
        truth = shapley_by_permutations(pool.mean_game(), pool.slots)
        for n in (2, 3, 5):
            rows = draw_rows(pool, np.random.default_rng(n), n, 2000)
            low, high = per_task_bounds(phi[rows])
            raw_low, raw_high = per_task_bounds(phi[rows], clip=False)
            outside += int(((raw_low < -1) | (raw_high > 1)).sum())
            assert low.min() >= -1.0 and high.max() <= 1.0
            hits = (low <= truth) & (truth <= high)
            raw_hits = (raw_low <= truth) & (truth <= raw_high)
            assert np.array_equal(hits, raw_hits), (env, n)
    assert outside > 0  # the clip had something to do
