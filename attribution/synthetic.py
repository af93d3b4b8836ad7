"""Synthetic Bernoulli games with a known answer, for tests and benchmarks.

The true v(S) is fixed (a base rate, additive slot effects and a few pairwise
interactions), so the true Shapley and Banzhaf values are exact. Episodes are
Bernoulli draws whose success probability is exactly v(S) on average over
tasks, with an optional *task effect*: a latent difficulty z_t shared by every
episode on task t (a Gaussian copula with latent correlation ``task_rho``), so
easy tasks are easy for every coalition, as with real benchmarks. The marginal
success rate stays v(S) whatever ``task_rho`` is, so the truth does not move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from attribution.exact import banzhaf_matrix, shapley_matrix
from attribution.game import FloatArray, IntArray


@dataclass(frozen=True)
class BernoulliGame:
    """A game with known v over all 2^n masks; ``draw`` simulates episodes."""

    v: FloatArray
    task_rho: float = 0.0
    task_seed: int = 0

    @property
    def n(self) -> int:
        return len(self.v).bit_length() - 1

    @property
    def shapley(self) -> FloatArray:
        return np.asarray(shapley_matrix(self.n) @ self.v)

    @property
    def banzhaf(self) -> FloatArray:
        return np.asarray(banzhaf_matrix(self.n) @ self.v)

    def draw(self, rng: np.random.Generator, masks: IntArray, tasks: IntArray) -> FloatArray:
        """Rewards of episodes ``masks`` on integer ``tasks`` (task effects by id)."""
        masks = np.asarray(masks, dtype=np.int64)
        thresholds = stats.norm.ppf(np.clip(self.v[masks], 1e-12, 1 - 1e-12))
        if self.task_rho > 0:
            tasks = np.asarray(tasks, dtype=np.int64)
            uniq, inv = np.unique(tasks, return_inverse=True)
            z = _task_latent(uniq, self.task_seed)
            latent = np.sqrt(self.task_rho) * z[inv] + np.sqrt(1 - self.task_rho) * (
                rng.standard_normal(len(masks))
            )
        else:
            latent = rng.standard_normal(len(masks))
        return (latent < thresholds).astype(np.float64)


def _task_latent(task_ids: IntArray, seed: int) -> FloatArray:
    """A standard-normal difficulty per integer task id, fixed for a given seed.

    Derived by hashing (seed, id) so a task keeps its difficulty across calls
    without the game holding state; a new seed is a new draw of the task pool.
    """
    ids = np.asarray(task_ids, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        return _mix(ids, seed)


def _mix(ids: np.ndarray, seed: int) -> FloatArray:
    x = ids * np.uint64(0x9E3779B97F4A7C15) + np.uint64(seed & 0xFFFFFFFF) * np.uint64(
        0xBF58476D1CE4E5B9
    )
    x ^= x >> np.uint64(31)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(29)
    u = (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return np.asarray(stats.norm.ppf(np.clip(u, 1e-12, 1 - 1e-12)), dtype=np.float64)


def additive_game(
    base: float,
    effects: Sequence[float],
    interactions: dict[tuple[int, int], float] | None = None,
    task_rho: float = 0.0,
) -> BernoulliGame:
    """v(S) = base + sum of effects in S + interactions of pairs inside S (clipped)."""
    n = len(effects)
    masks = np.arange(1 << n)
    v = np.full(len(masks), float(base))
    for i, e in enumerate(effects):
        v += np.where(masks >> i & 1, e, 0.0)
    for (i, j), e in (interactions or {}).items():
        v += np.where((masks >> i & 1) & (masks >> j & 1), e, 0.0)
    return BernoulliGame(np.clip(v, 0.01, 0.99), task_rho)


def paper_like_game(n: int = 4, task_rho: float = 0.0) -> BernoulliGame:
    """v(empty) = 0.3, v(N) = 0.6, unequal slot effects and two interactions."""
    raw = np.linspace(1.0, 2.0, n)
    effects = 0.3 * raw / raw.sum()
    inter = {(0, 1): 0.02, (n - 2, n - 1): -0.02} if n >= 4 else None
    return additive_game(0.3, list(effects), inter, task_rho)
