"""Do the 95% intervals cover the true phi 93-97% of the time? (known synthetic games)

Each check runs >= 500 replications with fixed seeds, so the results are
deterministic; with 4 slots x 500 replications the pooled coverage has a
standard error of about 0.5 point, well inside the 93-97% band.

The true values are computed here from the game's v(S) by the textbook
subset formula (:func:`true_shapley`), not with the estimator's own matrix
(``bg.shapley`` uses :func:`attribution.exact.shapley_matrix`): a truth made
with the estimator's matrix cannot catch a wrong matrix.
"""

from __future__ import annotations

from functools import lru_cache
from math import factorial

import numpy as np

from attribution.allocation import block_repeats, open_slots
from attribution.estimates import Estimates
from attribution.exact import shapley_matrix, shapley_values
from attribution.game import Game, smoothed_bernoulli_variance
from attribution.sampling import KernelShapPaired, StratifiedShapley
from attribution.synthetic import BernoulliGame, paper_like_game
from attribution.variance import anytime_factor

REPS = 500
SLOTS = ["planning", "reasoning", "action", "reflection"]


def true_shapley(v: np.ndarray) -> np.ndarray:
    """Shapley values of v (over bit masks): sum over S without i of w(|S|) (v(S+i) - v(S))."""
    return _true_shapley(tuple(float(x) for x in v))


@lru_cache(maxsize=16)
def _true_shapley(v: tuple[float, ...]) -> np.ndarray:
    n = len(v).bit_length() - 1
    phi = np.zeros(n)
    for i in range(n):
        for s in range(len(v)):
            if s >> i & 1:
                continue
            size = bin(s).count("1")
            weight = factorial(size) * factorial(n - size - 1) / factorial(n)
            phi[i] += weight * (v[s | 1 << i] - v[s])
    return phi


def drawn(
    bg: BernoulliGame, rng: np.random.Generator, masks: np.ndarray, tasks: np.ndarray
) -> Game:
    """A game holding one draw of ``bg`` at each (coalition mask, task) cell."""
    game = Game(SLOTS)
    game.add_many(masks, [str(t) for t in tasks], bg.draw(rng, masks, tasks))
    return game


def covers(est: Estimates, bg: BernoulliGame) -> np.ndarray:
    """Per slot: does the estimate's 95% interval hold ``bg``'s true Shapley value."""
    return _covered(est.ci_low, est.ci_high, true_shapley(bg.v))


def coverage_near_95(hits: list[np.ndarray]) -> float:
    """How often the intervals held the truth (over replications and slots), checked to be
    93-97%."""
    coverage = float(np.mean(hits))
    assert 0.93 <= coverage <= 0.97, coverage
    return coverage


def _covered(low: np.ndarray, high: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return (low <= truth) & (truth <= high)


def test_independent_intervals_cover_at_fixed_n() -> None:
    bg = paper_like_game(4)
    rng = np.random.default_rng(2024)
    hits = []
    for r in range(REPS):
        masks = np.repeat(np.arange(16), 30)
        tasks = np.arange(len(masks)) + r * 10_000
        game = drawn(bg, rng, masks, tasks)
        est = shapley_values(game)
        assert est.method == "independent"
        hits.append(covers(est, bg))
    coverage_near_95(hits)


def test_paired_intervals_cover_with_task_effects() -> None:
    bg0 = paper_like_game(4, task_rho=0.5)
    rng = np.random.default_rng(99)
    hits = []
    widths_paired, widths_indep = [], []
    for r in range(REPS):
        bg = type(bg0)(bg0.v, bg0.task_rho, task_seed=r)
        tasks = np.repeat(np.arange(40), 16)
        masks = np.tile(np.arange(16), 40)
        game = drawn(bg, rng, masks, tasks)
        est = shapley_values(game)
        assert est.method == "paired"
        hits.append(covers(est, bg))
        widths_paired.append(est.se.mean())
        widths_indep.append(shapley_values(game, method="independent").se.mean())
    coverage_near_95(hits)
    assert np.mean(widths_paired) < 0.92 * np.mean(widths_indep)


def test_coverage_holds_when_stopping_adaptively_on_width() -> None:
    """The service's policy (task blocks, Neyman repeats), stopped when every
    half-width <= target: the fixed-sample interval still covers, and the
    anytime-valid one covers at least as often."""
    bg0 = paper_like_game(4, task_rho=0.5)
    coef = shapley_matrix(4)
    rng = np.random.default_rng(7)
    target = 0.08
    hits, hits_cs, sizes = [], [], []
    for r in range(REPS):
        bg = type(bg0)(bg0.v, bg0.task_rho, task_seed=1000 + r)
        game = Game(SLOTS)
        hw = np.full(4, np.inf)
        task = 0
        est = None
        plan = block_repeats(game, coef)
        while True:
            masks = np.repeat(np.arange(16), [plan.repeats[s] for s in range(16)])
            tasks = np.full(len(masks), task)
            game.add_many(masks, [str(task)] * len(masks), bg.draw(rng, masks, tasks))
            task += 1
            if task >= 12 and task % 2 == 0:
                est = shapley_values(game, horizon=600)
                hw = est.halfwidths()
                if np.all(hw <= target) or task > 200:
                    break
                plan = block_repeats(game, coef, slot_weights=open_slots(hw, target))
        assert est is not None
        sizes.append(game.episodes)
        hits.append(covers(est, bg))
        cs = est.halfwidths(anytime=True)
        hits_cs.append(_covered(est.values - cs, est.values + cs, true_shapley(bg.v)))
    coverage = coverage_near_95(hits)
    assert float(np.mean(hits_cs)) >= coverage
    assert np.median(sizes) < 1500


def test_anytime_sequence_survives_peeking_where_fixed_intervals_do_not() -> None:
    """Look after every round of 16 episodes for 60 rounds: the chance that the
    fixed 95% interval *ever* misses the truth is far above 5%; the anytime-valid
    sequence keeps it near or below 5% (vectorised over 1,000 replications)."""
    bg = paper_like_game(4)
    coef = shapley_matrix(4)
    rng = np.random.default_rng(5)
    reps, rounds, per = 1000, 60, 4
    draws = rng.random((reps, rounds, 16, per)) < bg.v[None, None, :, None]
    sums = np.cumsum(draws.sum(axis=3), axis=1).astype(float)  # reps x rounds x 16
    counts = per * np.arange(1, rounds + 1, dtype=float)[None, :, None]
    phi = sums / counts @ coef.T
    var = smoothed_bernoulli_variance(sums, counts) / counts @ (coef**2).T
    se = np.sqrt(var)
    truth = true_shapley(bg.v)
    units = 16 * per * np.arange(1, rounds + 1)
    factor = np.array([anytime_factor(u, 16 * per * rounds, 0.05) for u in units])
    miss_fixed = np.any(np.abs(phi - truth) > 1.96 * se, axis=1).mean()
    miss_cs = np.any(np.abs(phi - truth) > factor[None, :, None] * se, axis=1).mean()
    assert miss_fixed > 0.15
    assert miss_cs <= 0.06


def test_stratified_estimator_covers_for_ten_slots() -> None:
    bg = paper_like_game(10)
    slots = [f"s{i}" for i in range(10)]
    rng = np.random.default_rng(3)
    hits = []
    for _ in range(REPS):
        est = StratifiedShapley(slots)
        first = est.initial_design(rng)  # every stratum once, then Neyman sizes
        est.add_many(first, (rng.random(len(first)) < bg.v[first]).astype(float))
        assert est.ready
        for _ in range(4):
            masks = est.sample_many(rng, 100)
            est.add_many(masks, (rng.random(len(masks)) < bg.v[masks]).astype(float))
        e = est.estimates()
        hits.append(_covered(e.ci_low, e.ci_high, true_shapley(bg.v)))
    coverage_near_95(hits)


def test_kernelshap_paired_is_efficient_and_covers() -> None:
    bg = paper_like_game(6, task_rho=0.5)
    slots = [f"s{i}" for i in range(6)]
    rng = np.random.default_rng(8)
    hits = []
    for r in range(REPS):
        est = KernelShapPaired(slots)
        v0 = bg.draw(rng, np.zeros(30, dtype=np.int64), np.arange(30) + r * 10_000)
        vn = bg.draw(rng, np.full(30, 63), np.arange(30) + r * 10_000 + 5_000)
        for a, b in zip(v0, vn, strict=True):
            est.add_empty(float(a))
            est.add_full(float(b))
        masks, comps = est.sample_pairs(rng, 150)
        tasks = np.arange(150) + r * 10_000 + 1_000  # a pair shares its task
        rewards = bg.draw(rng, np.concatenate([masks, comps]), np.concatenate([tasks, tasks]))
        est.add_pairs(masks, rewards[:150], rewards[150:])
        e = est.estimates()
        assert np.isclose(e.values.sum(), np.mean(vn) - np.mean(v0))
        hits.append(_covered(e.ci_low, e.ci_high, true_shapley(bg.v)))
    coverage_near_95(hits)


def test_covariance_form_covers_with_incomplete_blocks() -> None:
    """Each task runs a random half of the coalitions: blocks are incomplete, so
    the covariance (cluster) form is used; it must still cover."""
    bg0 = paper_like_game(4, task_rho=0.5)
    rng = np.random.default_rng(31)
    hits = []
    for r in range(REPS):
        bg = type(bg0)(bg0.v, bg0.task_rho, task_seed=50_000 + r)
        keep = rng.random((60, 16)) < 0.5
        keep[:2] = True  # every coalition at least twice
        tasks, masks = np.nonzero(keep)
        game = drawn(bg, rng, masks, tasks)
        est = shapley_values(game)
        assert est.method == "covariance"
        hits.append(covers(est, bg))
    coverage_near_95(hits)


def test_repeats_keep_the_task_as_the_unit_and_cover() -> None:
    """Repeats at temperature > 0 on few tasks: replays of a task are not new tasks.

    10 tasks x 3 repeats per coalition, with strong task effects: the interval
    must cluster by task (not treat the 30 episodes per coalition as
    independent, which covered about 82% of the time) and still cover.
    """
    bg0 = paper_like_game(4, task_rho=0.5)
    rng = np.random.default_rng(31)
    hits = []
    for r in range(600):
        bg = type(bg0)(bg0.v, bg0.task_rho, task_seed=5000 + r)
        tasks = np.repeat(np.arange(10), 16 * 3)
        masks = np.tile(np.arange(16), 10 * 3)
        game = drawn(bg, rng, masks, tasks)
        assert game.has_repeats()
        est = shapley_values(game)
        assert est.method == "paired" and est.units == 10
        hits.append(covers(est, bg))
    coverage_near_95(hits)


def test_exact_replays_add_no_information() -> None:
    """Three identical copies of every episode (what temperature 0 replays give)
    leave the interval as it was with one: the task is the unit."""
    bg = paper_like_game(4, task_rho=0.3)
    rng = np.random.default_rng(5)
    tasks = np.repeat(np.arange(12), 16)
    masks = np.tile(np.arange(16), 12)
    rewards = bg.draw(rng, masks, tasks)
    once, thrice = Game(SLOTS), Game(SLOTS)
    once.add_many(masks, [str(t) for t in tasks], rewards)
    for _ in range(3):
        thrice.add_many(masks, [str(t) for t in tasks], rewards)
    a, b = shapley_values(once, method="paired"), shapley_values(thrice)
    assert np.allclose(a.values, b.values)
    assert b.method == "paired" and b.units == 12
    assert np.allclose(b.se, a.se, rtol=0.1), (a.se, b.se)
    # counting the copies as independent episodes would claim sqrt(3) less noise
    naive = shapley_values(thrice, method="independent")
    assert np.all(b.se > 1.2 * naive.se)
