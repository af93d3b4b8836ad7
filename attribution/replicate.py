"""Replications of small runs from real per-task outcomes, for coverage checks.

A run's interval is a statement about repeating the run on fresh tasks. To
check it at 5-30 tasks thousands of times we need thousands of runs; the
pipeline is too slow for that in CI, but at temperature 0 an episode's
reward is a function of (coalition, task) (the reference computation of the
truth tables rests on the same fact), so a run of n tasks is n tasks drawn
from the generator with every coalition's outcome on each. A *pool* holds
those outcomes for many tasks the generator really made and the simulator
really played (``benchmarks/per_task_outcomes.py`` writes them), and a
replication draws n of its tasks (with replacement) and builds the game a
run would have built from them.

The true value the intervals should cover comes from the stored truth
tables, turned into Shapley values by :func:`shapley_by_permutations`, which
averages marginal contributions over every order of the slots and so shares
no code with :func:`attribution.exact.shapley_matrix` (a check that used the
estimator's own matrix for the truth could not catch a wrong matrix).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attribution import exact
from attribution.estimates import Estimates
from attribution.exact import shapley_values
from attribution.game import FloatArray, Game
from attribution.variance import per_task_bounds


@dataclass(frozen=True)
class Pool:
    """Per task and coalition: reward and agent cost (tasks x coalitions)."""

    env: str
    slots: tuple[str, ...]
    masks: np.ndarray  # game mask of each column
    rewards: FloatArray
    costs: FloatArray
    seeds: np.ndarray

    @property
    def tasks(self) -> int:
        return len(self.rewards)

    def values(self, what: str) -> FloatArray:
        return self.rewards if what == "reward" else self.costs

    def mean_game(self, what: str = "reward") -> dict[str, float]:
        """The pool's own coalition means, by results key (the resampling world's truth)."""
        game = Game(self.slots)
        means = self.values(what).mean(axis=0)
        return {game.key(int(m)): float(v) for m, v in zip(self.masks, means, strict=True)}


def load_pool(path: Path) -> Pool:
    """Read a pool written by benchmarks/per_task_outcomes.py."""
    data = np.load(path)
    keys = [str(k) for k in data["keys"]]
    full = max(keys, key=lambda k: k.count("+"))
    slots = tuple(full.split("+"))
    game = Game(slots)
    masks = np.array([game.mask_of_key(k) for k in keys], dtype=np.int64)
    return Pool(
        env=path.stem,
        slots=slots,
        masks=masks,
        rewards=np.asarray(data["rewards"], dtype=np.float64),
        costs=np.asarray(data["costs"], dtype=np.float64),
        seeds=np.asarray(data["seeds"]),
    )


def shapley_by_permutations(values: Mapping[str, float], slots: Sequence[str]) -> FloatArray:
    """Shapley values from v (results key -> value): mean marginal contribution over orders."""

    def key(members: set[str]) -> str:
        return "+".join(s for s in slots if s in members)

    phi = np.zeros(len(slots))
    orders = list(itertools.permutations(range(len(slots))))
    for order in orders:
        members: set[str] = set()
        for i in order:
            before = values[key(members)]
            members.add(slots[i])
            phi[i] += values[key(members)] - before
    return phi / len(orders)


def draw_game(pool: Pool, rng: np.random.Generator, n: int, what: str = "reward") -> Game:
    """The game of a run of ``n`` tasks drawn from the pool.

    Draws are with replacement, i.e. independent draws from the pool's
    empirical distribution of tasks, so the pool's mean game is exactly the
    truth of the world the replications come from (no finite-population
    correction); a task drawn twice is two tasks of the run.
    """
    return game_of_rows(pool, rng.integers(0, pool.tasks, size=n), what)


def per_task_shapley(pool: Pool, what: str = "reward") -> FloatArray:
    """tasks x slots: each pool task's own Shapley values, by the estimator's matrix.

    The matrix is looked up at call time (``exact.shapley_matrix``), so a
    wrong matrix in the estimator is a wrong matrix here too.
    """
    full = np.zeros((pool.tasks, 1 << len(pool.slots)))
    full[:, pool.masks] = pool.values(what)
    return np.asarray(full @ exact.shapley_matrix(len(pool.slots)).T)


def draw_rows(pool: Pool, rng: np.random.Generator, n: int, reps: int) -> np.ndarray:
    """reps x n pool rows: the tasks of ``reps`` runs of ``n`` tasks (with replacement)."""
    return rng.integers(0, pool.tasks, size=(reps, n))


def batch_intervals(
    pool: Pool, n: int, reps: int, *, seed: int = 0, what: str = "reward"
) -> tuple[FloatArray, FloatArray]:
    """(ci_low, ci_high), each reps x slots: :func:`intervals` for all runs at once.

    A run of n pool tasks is a complete block design, where the exact game's
    paired interval is the interval over the tasks' own Shapley values
    (:func:`attribution.variance.per_task_bounds`); one array operation
    replaces a game per replication (tests/attribution/test_interval_coverage.py checks
    that both give the same bounds).
    """
    rows = draw_rows(pool, np.random.default_rng(seed), n, reps)
    return per_task_bounds(per_task_shapley(pool, what)[rows], unit_interval=what == "reward")


def game_of_rows(pool: Pool, rows: np.ndarray, what: str = "reward") -> Game:
    """The game a run of the pool tasks ``rows`` builds (a task drawn twice is two tasks)."""
    game = Game(pool.slots, unit_interval=what == "reward")
    k = len(pool.masks)
    n = len(rows)
    game.add_many(
        np.tile(pool.masks, n),
        [str(t) for t in np.repeat(np.arange(n), k)],
        pool.values(what)[rows].ravel(),
    )
    return game


Estimator = Callable[[Game], Estimates]


def intervals(
    pool: Pool,
    n: int,
    reps: int,
    *,
    seed: int = 0,
    what: str = "reward",
    estimator: Estimator | None = None,
) -> tuple[FloatArray, FloatArray]:
    """(ci_low, ci_high), each reps x slots, of ``reps`` runs of ``n`` tasks."""
    rng = np.random.default_rng(seed)
    estimate = estimator or (lambda g: shapley_values(g))
    low = np.zeros((reps, len(pool.slots)))
    high = np.zeros((reps, len(pool.slots)))
    for r in range(reps):
        est = estimate(draw_game(pool, rng, n, what))
        low[r], high[r] = est.ci_low, est.ci_high
    return low, high


def coverage_hits(
    pool: Pool,
    truth: FloatArray,
    n: int,
    reps: int,
    *,
    seed: int = 0,
    what: str = "reward",
    estimator: Estimator | None = None,
) -> tuple[np.ndarray, FloatArray]:
    """(hits, halfwidths), each reps x slots: does each replication's interval hold the truth.

    Without ``estimator``, the runs' intervals are computed all at once
    (:func:`batch_intervals`); with one, a game is built per replication.
    """
    if estimator is None:
        low, high = batch_intervals(pool, n, reps, seed=seed, what=what)
    else:
        low, high = intervals(pool, n, reps, seed=seed, what=what, estimator=estimator)
    return (low <= truth) & (truth <= high), (high - low) / 2.0


def wilson(hits: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval of a proportion (for reporting measured coverage)."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)
