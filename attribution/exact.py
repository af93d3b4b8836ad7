"""Exact Shapley and Banzhaf values and the pairwise Shapley interaction index.

Each index is a fixed linear map from the 2^n coalition values to one number
per slot (or slot pair), so we build the coefficient matrix once per n and
apply it: ``phi = C @ v``. The same matrix feeds :mod:`attribution.variance`,
which is why an interval comes with every value.

Weights, for slot i and a coalition S not containing i:

* Shapley: ``|S|! (n-|S|-1)! / n!`` on ``v(S + i) - v(S)`` (the estimand the
  CapaBench paper states);
* Banzhaf: ``1 / 2^(n-1)`` on the same differences (what CapaBench's released
  code computes);
* Shapley interaction of i, j (Grabisch & Roubens 1999), S without i and j:
  ``|S|! (n-|S|-2)! / (n-1)!`` on ``v(S+ij) - v(S+i) - v(S+j) + v(S)``.

A coalition without data makes the value *not estimable* (:class:`NotEstimable`),
never a silent zero.
"""

from __future__ import annotations

from functools import lru_cache
from math import factorial

import numpy as np

from agentbus.core.coalitions import coalition_label
from attribution.estimates import Estimates, NotEstimable
from attribution.game import FloatArray, Game
from attribution.variance import Method, linear_covariance

__all__ = [
    "banzhaf_matrix",
    "banzhaf_values",
    "exact_values",
    "interaction_matrix",
    "interaction_values",
    "shapley_matrix",
    "shapley_values",
]


def _popcounts(n: int) -> np.ndarray:
    masks = np.arange(1 << n)
    return np.array([bin(int(m)).count("1") for m in masks], dtype=np.int64)


@lru_cache(maxsize=32)
def shapley_matrix(n: int) -> FloatArray:
    """C (n x 2^n) with phi_i = sum_S C[i, S] v(S) for the Shapley value."""
    size = 1 << n
    pop = _popcounts(n)
    w = np.array([factorial(s) * factorial(n - s - 1) / factorial(n) for s in range(n)])
    c = np.zeros((n, size))
    masks = np.arange(size)
    for i in range(n):
        has = (masks >> i & 1).astype(bool)
        c[i, has] = w[pop[has] - 1]
        c[i, ~has] = -w[pop[~has]]
    c.setflags(write=False)
    return c


@lru_cache(maxsize=32)
def banzhaf_matrix(n: int) -> FloatArray:
    """C (n x 2^n) for the Banzhaf value: +-1/2^(n-1)."""
    size = 1 << n
    masks = np.arange(size)
    c = np.zeros((n, size))
    for i in range(n):
        has = (masks >> i & 1).astype(bool)
        c[i] = np.where(has, 1.0, -1.0) / (1 << (n - 1))
    c.setflags(write=False)
    return c


@lru_cache(maxsize=32)
def interaction_matrix(n: int) -> tuple[tuple[tuple[int, int], ...], FloatArray]:
    """Pairs (i < j) and C (pairs x 2^n) for the pairwise Shapley interaction index."""
    if n < 2:
        return (), np.zeros((0, 1 << n))
    size = 1 << n
    pop = _popcounts(n)
    w = np.array([factorial(s) * factorial(n - s - 2) / factorial(n - 1) for s in range(n - 1)])
    masks = np.arange(size)
    pairs = tuple((i, j) for i in range(n) for j in range(i + 1, n))
    c = np.zeros((len(pairs), size))
    for k, (i, j) in enumerate(pairs):
        hi = (masks >> i & 1).astype(bool)
        hj = (masks >> j & 1).astype(bool)
        rest = pop - hi - hj
        sign = np.where(hi == hj, 1.0, -1.0)
        c[k] = sign * w[rest]
    c.setflags(write=False)
    return pairs, c


def exact_values(values: FloatArray, kind: str = "shapley") -> FloatArray:
    """Index of a noise-free game given as v over all 2^n masks (for checks)."""
    v = np.asarray(values, dtype=np.float64)
    n = len(v).bit_length() - 1
    if 1 << n != len(v):
        raise ValueError("values must have length 2^n")
    mat = shapley_matrix(n) if kind == "shapley" else banzhaf_matrix(n)
    return np.asarray(mat @ v)


def _require_complete(game: Game) -> None:
    empty = np.flatnonzero(game.counts == 0)
    if len(empty):
        names = ", ".join(coalition_label(game.key(int(m))) for m in empty[:4])
        more = f" and {len(empty) - 4} more" if len(empty) > 4 else ""
        raise NotEstimable(
            f"not estimable yet: {len(empty)} coalition(s) have no episodes ({names}{more})"
        )
    if game.n_tasks < 2 and game.has_repeats():
        raise NotEstimable(
            "not estimable yet: with repeats the task is the unit of the interval, "
            "and one task gives no spread between tasks (needs at least 2)"
        )


def _estimate(
    game: Game,
    kind: str,
    coef: FloatArray,
    labels: tuple[str, ...],
    confidence: float,
    method: Method,
    horizon: float | None,
) -> Estimates:
    _require_complete(game)
    values = coef @ game.means
    cov = linear_covariance(game, coef, method)
    units = cov.units
    h = horizon if horizon is not None else 1000.0
    if cov.method in ("paired", "covariance") and game.episodes:
        h = h * units / game.episodes
    return Estimates(
        kind=kind,
        slots=labels,
        values=np.asarray(values, dtype=np.float64),
        cov=cov.cov,
        method=cov.method,
        confidence=confidence,
        df=cov.df,
        units=units,
        horizon=h,
        episodes=game.episodes,
        skew=cov.skew,
        limits=index_limits(kind) if game.unit_interval else None,
    )


def index_limits(kind: str) -> tuple[float, float]:
    """The range an index of a reward in [0, 1] can take.

    Shapley and Banzhaf weights are non-negative and sum to 1 over marginal
    contributions in [-1, 1]; a pairwise interaction sums second differences
    ``v(S+ij) - v(S+i) - v(S+j) + v(S)``, each in [-2, 2].
    """
    return (-2.0, 2.0) if kind == "interaction" else (-1.0, 1.0)


def shapley_values(
    game: Game,
    *,
    confidence: float = 0.95,
    method: Method = "auto",
    horizon: float | None = None,
) -> Estimates:
    """Exact Shapley values of the estimated game, with intervals.

    ``horizon`` is the planned number of episodes, used only to tune the
    anytime-valid intervals.
    """
    return _estimate(
        game, "shapley", shapley_matrix(game.n), game.slots, confidence, method, horizon
    )


def banzhaf_values(
    game: Game,
    *,
    confidence: float = 0.95,
    method: Method = "auto",
    horizon: float | None = None,
) -> Estimates:
    """Exact Banzhaf values of the estimated game, with intervals."""
    return _estimate(
        game, "banzhaf", banzhaf_matrix(game.n), game.slots, confidence, method, horizon
    )


def interaction_values(
    game: Game,
    *,
    confidence: float = 0.95,
    method: Method = "auto",
    horizon: float | None = None,
) -> Estimates:
    """Pairwise Shapley interaction indices; labels are ``"a*b"`` per slot pair."""
    pairs, coef = interaction_matrix(game.n)
    labels = tuple(f"{game.slots[i]}*{game.slots[j]}" for i, j in pairs)
    return _estimate(game, "interaction", coef, labels, confidence, method, horizon)
