"""Standard errors for any linear function of the coalition means.

Shapley, Banzhaf and interaction indices are all of the form
``sum_S c_S * mean(S)``, so one routine gives the covariance matrix of a whole
family of them (every slot at once, hence also differences between slots).

Three forms, chosen by :func:`linear_covariance` (``method="auto"``):

The task is the unit whenever tasks are shared: from two shared tasks up
the interval is the paired (task-clustered) one with a t quantile at
T-1 degrees of freedom, at every size. An earlier version fell back to the
independent form below 20 shared tasks; that form ignores the task effects,
so it was too narrow for the slot whose contribution varies most between
tasks (planning on navigation covered about 0.88 at 10-19 tasks) and 1.4-2.9x
too wide for the others. The replication tests
(``tests/test_interval_coverage.py``, ``benchmarks/interval_coverage.py``)
measure the paired form at 5, 10, 15 and 30 tasks, per slot and per
environment; docs/design-notes.md has the figures.

Repeats (a coalition run more than once on the same task) use the same
task-clustered form: replays of one task are not new tasks.

``independent``
    Episodes are independent draws: ``Var = sum_S c_S^2 sigma_S^2 / m_S``, with
    the shrunk variances of :meth:`Game.shrunk_variances` so a 0/m coalition
    does not claim zero variance. Used only when fewer than two tasks are
    shared by two coalitions (nothing to pair on), or when asked for.
``paired`` / ``covariance``
    Episodes that share a task are correlated (an easy task is easy for every
    coalition), and those correlations cancel in ``sum_S c_S mean(S)`` because
    the coefficients sum to 0. We use the cluster-robust (sandwich) variance
    with tasks as clusters: ``u_t = sum_{e in t} c_{S(e)} (r_e - mean_S(e)) /
    m_S(e)``, ``Var = T/(T-1) sum_t u_t^2``. With complete blocks (every task
    in every coalition) this *is* the paired estimator ``sd_t(d_t)^2 / T`` with
    ``d_t = sum_S c_S r_St`` ("paired"); with incomplete blocks it is the
    covariance form ("covariance"). Intervals use a t quantile with T-1
    degrees of freedom.

    The small-sample floor (:func:`small_sample_floor`): for games of
    rewards in [0, 1] (``Game.unit_interval``) each variance is raised to at
    least what Jeffreys-smoothed Bernoulli variances of the coalitions that
    went 0/m or m/m imply. It is data-driven: 0 where every coalition's rate
    is inside (0, 1) or its rewards are graded, and it matters exactly when
    the paired spread can be 0 although the slot's contribution is not (five
    tasks on which no coalition differs). Games of other quantities (cost)
    get no floor: their scale is not [0, 1], so a Bernoulli bound would be
    made up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from attribution.game import FloatArray, Game

Method = Literal["auto", "independent", "paired", "covariance"]

#: the fewest tasks an adaptive run stops on (its Chow-Robbins rule; see the design
#: notes). Intervals use the paired form from MIN_SHARED tasks up, whatever the size.
MIN_CLUSTERS = 20
#: the fewest shared tasks the paired (task-clustered) form needs
MIN_SHARED = 2


@dataclass(frozen=True, slots=True)
class Covariance:
    """Covariance matrix of ``coef @ means``, the form used and its dof."""

    cov: FloatArray
    method: str
    df: float | None
    units: int


def linear_covariance(game: Game, coef: FloatArray, method: Method = "auto") -> Covariance:
    """Covariance of ``coef @ game.means`` (coef: k x 2^n), every coalition observed."""
    coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
    m = game.counts.astype(np.float64)
    if np.any(m == 0):
        raise ValueError("every coalition needs data before its variance is defined")
    shrunk = game.shrunk_variances()
    if method == "auto":
        # The task is the unit as soon as two tasks are shared (or a task is
        # repeated): the t quantile with T-1 degrees of freedom pays for
        # having few, and the floor below for a spread of 0 (module docstring).
        if game.n_tasks >= 2 and (game.has_repeats() or game.shared_tasks() >= MIN_SHARED):
            complete, _ = game.block_structure()
            method = "paired" if complete else "covariance"
        else:
            method = "independent"
    if method == "independent":
        cov = (coef * (shrunk / m)) @ coef.T
        return Covariance(cov, "independent", None, game.episodes)
    tasks, masks, rewards = game.observations()
    means = game.means
    resid = rewards - means[masks]
    weights = coef[:, masks] / m[masks]
    n_tasks = game.n_tasks
    u = np.stack(
        [np.bincount(tasks, weights=w * resid, minlength=n_tasks) for w in weights], axis=0
    )
    factor = n_tasks / max(n_tasks - 1, 1)
    cluster_cov: FloatArray = np.asarray(factor * (u @ u.T), dtype=np.float64)
    if game.unit_interval:
        # raise each variance to the floor where the tasks' spread is below it
        floor = small_sample_floor(game, coef)
        cluster_cov = cluster_cov + np.diag(np.maximum(floor - np.diag(cluster_cov), 0.0))
    return Covariance(cluster_cov, method, float(max(n_tasks - 1, 1)), n_tasks)


def small_sample_floor(game: Game, coef: FloatArray) -> FloatArray:
    """The least variance of ``coef @ means`` a game of rewards in [0, 1] may claim.

    ``sum_S c_S^2 e_S / m_S``, where ``e_S`` is what a coalition's plug-in
    variance misses next to a Jeffreys-smoothed Bernoulli one, p(1-p) at
    p = (k + 1/2) / (m + 1). It matters only where coalitions went 0/m or
    m/m, where five tasks can agree on every coalition and so show no spread
    at all although the slot's true contribution is not zero. The paired
    variance is raised to it, not added to it (added, with the Laplace
    smoothing of :meth:`Game.shrunk_variances`, it made 5-15 task intervals
    cover 0.97-1.00). A coalition with graded rewards (some reward neither 0
    nor 1) gets none: its rewards show their spread (navigation covered
    0.94-0.96 per slot at 5-30 tasks without it, 0.99-1.00 at 5 with a
    pseudo-episode). Measured in docs/design-notes.md.
    """
    m = game.counts.astype(np.float64)
    p = (game.sums + 0.5) / (m + 1.0)
    excess = np.maximum(p * (1.0 - p) - game.ml_variances(), 0.0)
    excess = np.where(game.nonbinary_counts() > 0, 0.0, excess)
    return np.asarray((coef * coef) @ (excess / np.maximum(m, 1.0)), dtype=np.float64)


def anytime_factor(units: float, horizon: float, alpha: float) -> float:
    """Widening factor of a normal-mixture confidence sequence over a fixed interval.

    We use the asymptotic confidence sequence of Waudby-Smith et al. (2021,
    "Time-uniform central limit theory"), built on the normal-mixture boundary
    of Howard et al. (2021): with ``t`` units (episodes, or tasks when paired)
    and the standard error ``se`` of the running estimate, the half-width is
    ``se * sqrt(2 (t r^2 + 1) / (t r^2) * log(sqrt(t r^2 + 1) / alpha))``.
    The mixing scale ``r`` is fixed in advance so the boundary is tightest
    near ``horizon`` units (the planned run size). It stays valid whatever
    stopping rule looks at it, at the price of a wider interval (about
    1.3-1.5x at the horizon). Why not a betting interval for bounded means:
    phi is a signed combination of 2^n means with unequal sample sizes, and
    the CLT-based sequence handles that linear combination directly.
    """
    t = max(float(units), 1.0)
    h = max(float(horizon), 1.0)
    log_term = -2.0 * np.log(alpha)
    r2 = (log_term + np.log(log_term + 1.0)) / h
    tr2 = t * r2
    return float(np.sqrt(2.0 * (tr2 + 1.0) / tr2 * np.log(np.sqrt(tr2 + 1.0) / alpha)))
