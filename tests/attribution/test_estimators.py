"""The per-task estimators: unbiased, intervals that cover, and the same from a game of records.

Coverage is checked against the exact Shapley value of a synthetic
agent-like game (logistic, with pairwise and three-way interactions and a
difficulty per task), over slots x replications. A deliberately wrong
interval (the episodes treated as independent draws, ignoring that the
coalitions of a task share it) must fail the same check.
"""

from __future__ import annotations

import numpy as np
import pytest

from agentbus.core.errors import UserError
from attribution.estimates import NotEstimable
from attribution.estimators import Estimator, resolve_name
from attribution.estimators.synthetic import agent_like_game
from attribution.game import Game
from attribution.screening import lift_masks, screen

SLOTS8 = tuple(f"m{i}" for i in range(8))


def _coverage(name: str, reps: int, tasks: int, seed: int = 0) -> tuple[float, float]:
    game = agent_like_game(8, seed=3)
    truth = game.shapley
    est = Estimator.make(name, 8)
    rng = np.random.default_rng(seed)
    covered = []
    errors = []
    for _ in range(reps):
        masks = est.design(rng, tasks)
        e = est.from_per_task(est.per_task(masks, game.draw(rng, masks)), SLOTS8)
        covered.append((e.ci_low <= truth) & (truth <= e.ci_high))
        errors.append(e.values - truth)
    return float(np.mean(covered)), float(np.abs(np.mean(errors)))


@pytest.mark.parametrize("name", ["permutation", "stratified", "msr", "leverage"])
def test_sampled_estimators_cover_the_true_shapley_value(name: str) -> None:
    cov, bias = _coverage(name, reps=120, tasks=60)
    # 960 slot-replications: the 95% band of a calibrated interval is about 0.93-0.965
    assert 0.925 <= cov <= 0.975, cov
    assert bias < 0.01


def test_exact_per_task_matches_the_exact_game() -> None:
    game = agent_like_game(5, seed=1)
    est = Estimator.make("auto", 5)
    assert est.name == "exact"
    rng = np.random.default_rng(1)
    masks = est.design(rng, 30)
    rewards = game.draw(rng, masks)
    g = Game([f"s{i}" for i in range(5)])
    for t in range(30):
        g.add_many(masks[t], [f"t{t}"] * masks.shape[1], rewards[t])
    from_game = est.estimate(g)
    direct = est.from_per_task(est.per_task(masks, rewards), g.slots)
    assert np.allclose(from_game.values, direct.values)
    # the exact game's paired form adds a Laplace-smoothed floor for 0/m coalitions
    assert np.all(from_game.se >= direct.se * 0.999) and np.all(from_game.se < direct.se * 1.2)


@pytest.mark.parametrize("name", ["loo", "permutation", "stratified", "msr", "leverage"])
def test_a_game_of_records_gives_the_same_estimate_as_the_arrays(name: str) -> None:
    game = agent_like_game(8, seed=2)
    est = Estimator.make(name, 8)
    rng = np.random.default_rng(5)
    masks = est.design(rng, 25)
    rewards = game.draw(rng, masks)
    g = Game(SLOTS8)
    order = rng.permutation(masks.shape[1])  # records arrive in any order within a task
    for t in range(25):
        g.add_many(masks[t, order], [f"task{t}"] * len(order), rewards[t, order])
    a = est.estimate(g)
    b = est.from_per_task(est.per_task(masks, rewards), SLOTS8)
    assert a.units == 25 and np.allclose(a.values, b.values) and np.allclose(a.se, b.se)


def test_independent_episode_intervals_fail_coverage() -> None:
    """The wrong method: stratified values with an interval that ignores task pairing.

    Treating each pair's difference as an independent draw (the covariance
    divided by the number of pairs instead of over tasks) misses the
    within-task dependence of the systematic design and the task effects:
    it must not pass the coverage check the right interval passes.
    """
    game = agent_like_game(8, seed=3)
    truth = game.shapley
    est = Estimator.make("stratified", 8)
    rng = np.random.default_rng(0)
    covered = []
    for _ in range(120):
        masks = est.design(rng, 60)
        phi_t = est.per_task(masks, game.draw(rng, masks))
        se = phi_t.std(axis=0, ddof=1) / np.sqrt(phi_t.shape[0] * est.pairs)
        mean = phi_t.mean(axis=0)
        covered.append(np.abs(mean - truth) <= 1.96 * se)
    assert np.mean(covered) < 0.9


def test_designs_keep_every_coalition_of_a_task_distinct() -> None:
    for name in ("stratified", "msr", "leverage", "loo", "permutation"):
        est = Estimator.make(name, 6)
        masks = est.design(np.random.default_rng(0), 200)
        assert masks.shape == (200, est.episodes_per_task())
        assert all(len(set(row.tolist())) == masks.shape[1] for row in masks)


def test_small_games_keep_their_coalitions_distinct() -> None:
    for n in (2, 3, 4):
        for name in ("stratified", "msr", "leverage", "permutation", *(("loo",) if n > 2 else ())):
            est = Estimator.make(name, n)
            masks = est.design(np.random.default_rng(1), 50)
            assert all(len(set(row.tolist())) == masks.shape[1] for row in masks), (name, n)
    with pytest.raises(UserError):
        Estimator.make("loo", 2)


def test_auto_and_bad_names() -> None:
    assert resolve_name("auto", 5) == "exact"
    assert resolve_name("auto", 6) == "msr"
    with pytest.raises(UserError):
        resolve_name("magic", 6)
    with pytest.raises(NotEstimable):
        Estimator.make("msr", 6).estimate(Game([f"s{i}" for i in range(6)]))


def test_screen_drops_null_modules_and_keeps_strong_ones() -> None:
    game = agent_like_game(12, seed=12)
    truth = game.shapley
    loo = Estimator.make("loo", 12)
    rng = np.random.default_rng(0)
    masks = loo.design(rng, 1500)
    result = screen(loo.per_task(masks, game.draw(rng, masks)), tuple(map(str, range(12))), 0.05)
    assert result.dropped, "null modules are dropped at this size"
    assert all(abs(truth[i]) < 0.05 for i in result.dropped)
    assert "cannot matter" in result.summary()
    assert lift_masks(np.array([0b11]), (2, 5))[0] == (1 << 2) | (1 << 5)
