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
(``tests/attribution/test_interval_coverage.py``, ``benchmarks/interval_coverage.py``)
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

    Two small-sample corrections, chosen by measurement on real per-task
    outcomes of the simulator (``benchmarks/interval_coverage.py``; the
    figures are in docs/design-notes.md):

    * skewness (:func:`task_skewness`, applied by
      :func:`skewed_bounds`): per-task values are often skewed (a module
      that rescues a task now and then; a long episode that costs many times
      a short one), and a t interval on a few skewed values misses on the
      side of the long tail. Each bound is widened, never narrowed, to the
      one of Hall's (1992) skewness-removing transformation of the t
      statistic, with the sample skewness of the per-task contributions.
    * no spread (:func:`zero_spread_floor`): a slot whose per-task values all
      agree (five tasks on none of which the slot changed anything) shows a
      variance of 0, not a certainty. Its variance is raised to what a task
      unlike those seen could contribute: probability 1/2 / (T + 1) (the
      Jeffreys estimate of an event seen 0 times in T), size the largest
      deviation any slot of the game showed.

    An earlier floor (Jeffreys Bernoulli variances of every coalition that
    went 0/m or m/m, summed as if coalitions were independent) made 5-15
    task intervals cover 0.97-0.99: coalitions are strongly correlated
    within a task, and it ignored that.
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
    #: per row, the skewness the interval accounts for (None: symmetric)
    skew: FloatArray | None = None


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
    # T u_t is task t's deviation from the mean (exactly so with complete blocks)
    per_task = np.asarray(u * float(n_tasks), dtype=np.float64).T
    floor = zero_spread_floor(per_task, unit_interval=game.unit_interval)
    cluster_cov = cluster_cov + np.diag(floor)
    skew = task_skewness(per_task, unit_interval=game.unit_interval)
    return Covariance(cluster_cov, method, float(max(n_tasks - 1, 1)), n_tasks, skew)


def per_task_interval(
    phi_t: FloatArray, *, unit_interval: bool = True
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(mean, covariance of the mean, skewness) of per-task values (tasks x k, T >= 2).

    The interval over tasks of the sampled estimators and of replays
    (:mod:`attribution.estimators`, :mod:`attribution.stopping`), with the
    same two small-sample corrections as the exact game's paired form.
    """
    x = np.asarray(phi_t, dtype=np.float64)
    t = len(x)
    cov = np.atleast_2d(np.cov(x, rowvar=False, ddof=1)) / t
    cov = cov + np.diag(zero_spread_floor(x, unit_interval=unit_interval))
    return x.mean(axis=0), np.asarray(cov), task_skewness(x, unit_interval=unit_interval)


def per_task_bounds(
    phi_t: FloatArray, *, unit_interval: bool = True, confidence: float = 0.95, clip: bool = True
) -> tuple[FloatArray, FloatArray]:
    """(low, high) of :func:`per_task_interval`'s intervals, batched: phi_t is (..., tasks, k).

    Many replications at once (the coverage tests); the same numbers as
    building each run's game (tests/attribution/test_interval_coverage.py checks that),
    clipped like them into [-1, 1] for rewards (the range a Shapley value of
    a reward in [0, 1] can take; clipping never loses the truth). ``clip``
    False gives the unclipped bounds (to measure what clipping changes).
    """
    from scipy import special  # quantiles only (see attribution.estimates)

    x = np.asarray(phi_t, dtype=np.float64)
    t = x.shape[-2]
    var = x.var(axis=-2, ddof=1) / t + zero_spread_floor(x, unit_interval=unit_interval)
    q = float(special.stdtrit(t - 1, 0.5 + confidence / 2.0))
    skew = task_skewness(x, unit_interval=unit_interval)
    low, high = skewed_bounds(x.mean(axis=-2), np.sqrt(var), q, skew, t)
    if unit_interval and clip:
        return np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0)
    return low, high


#: the share of its standard error sqrt(6 / T) by which a sample skewness is shrunk
#: towards 0 before it widens a reward interval (measured; see task_skewness)
SKEW_SHRINK_REWARD = 0.5


def task_skewness(x: FloatArray, *, unit_interval: bool) -> FloatArray:
    """Per column of ``x`` (..., tasks, k): the sample skewness the interval uses.

    The adjusted Fisher-Pearson skewness G1 of the per-task values (0 below
    three tasks or where they do not vary). For rewards it is first shrunk
    towards 0 by half its standard error sqrt(6 / T): at 10-15 tasks the
    full estimate widened slots with mild skewness (math reasoning and
    action, skewness 0.5) to 0.97-0.98. For cost it is used in full: cost per
    task is skewed more (tools action -1.4), and shrunk, the 5-task
    intervals covered 0.92. Measured on real per-task outcomes
    (docs/design-notes.md).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    t = x.shape[-2]
    if t < 3:
        return np.zeros(x.shape[:-2] + x.shape[-1:])
    dev = x - x.mean(axis=-2, keepdims=True)
    m2 = (dev * dev).sum(axis=-2)
    m3 = (dev * dev * dev).sum(axis=-2)
    # a column varies against the largest deviation of any column (rounding is not spread)
    spread = np.abs(dev).max(axis=-2)
    varies = spread > np.maximum(1e-9 * spread.max(axis=-1, keepdims=True), 1e-15)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        g = t * np.sqrt(t - 1.0) / (t - 2.0) * m3 / np.maximum(m2, 1e-300) ** 1.5
    return shrink_skewness(np.where(varies, g, 0.0), t, unit_interval=unit_interval)


def shrink_skewness(g: FloatArray, tasks: int, *, unit_interval: bool) -> FloatArray:
    """Soft-threshold a sample skewness by SKEW_SHRINK_REWARD standard errors (rewards only)."""
    g = np.asarray(g, dtype=np.float64)
    if not unit_interval:
        return g
    cut = SKEW_SHRINK_REWARD * np.sqrt(6.0 / max(tasks, 1))
    return np.asarray(np.sign(g) * np.maximum(np.abs(g) - cut, 0.0))


def skewed_bounds(
    values: FloatArray, se: FloatArray, quantile: float, skew: FloatArray | None, units: int
) -> tuple[FloatArray, FloatArray]:
    """(low, high): the t interval, each side widened to Hall's where that is wider.

    Hall (1992, "On the removal of skewness by transformation") maps the
    studentised mean T = (mean - mu) / se through
    g(T) = T + a T^2 + a^2 T^3 / 3 + a / 2, a = skew / (3 sqrt(n)), which is
    nearly free of skewness; g is monotone with an explicit inverse, so the
    interval is mean - se g^-1(+-q). A bound that would come out nearer the
    estimate than the t interval's keeps the t bound: the skewness of a few
    tasks is noisy, and shrinking a side on it missed (math, 5 tasks: 0.89
    with Hall's alone).
    """
    values = np.asarray(values, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    low, high = values - quantile * se, values + quantile * se
    if skew is None or units < 3:
        return low, high
    a = np.asarray(skew, dtype=np.float64) / (3.0 * np.sqrt(float(units)))
    flat = np.abs(a) < 1e-9
    safe = np.where(flat, 1.0, a)

    def inverse(y: float) -> FloatArray:
        b = a / 2.0
        curved = (np.cbrt(1.0 + 3.0 * safe * (y - b)) - 1.0) / safe
        return np.asarray(np.where(flat, y - b, curved))

    return (
        np.minimum(low, values - se * inverse(quantile)),
        np.maximum(high, values - se * inverse(-quantile)),
    )


def zero_spread_floor(x: FloatArray, *, unit_interval: bool) -> FloatArray:
    """Variance to add to the mean of each column of ``x`` (..., tasks, k) that does not vary.

    ``(1/2) / (T + 1) * D^2 / T``: a task unlike the T seen turns up with the
    Jeffreys probability of an event seen 0 times in T, and it could differ
    by as much as the largest deviation D any column showed (1 for rewards in
    [0, 1] when no column varies; nothing for other quantities). Columns that
    vary get 0: their spread speaks for itself. Where every task agrees on a
    slot that is what five tasks can show (math's reflection: 2.5% of 5-task
    draws), and a point interval there would claim certainty.
    """
    x = np.asarray(x, dtype=np.float64)
    t = x.shape[-2]
    if t == 0:
        return np.zeros(x.shape[:-2] + x.shape[-1:])
    dev = np.abs(x - x.mean(axis=-2, keepdims=True)).max(axis=-2)
    largest = dev.max(axis=-1, keepdims=True)
    some = largest > 1e-15
    flat = dev <= 1e-9 * np.where(some, largest, 1.0)
    flat = flat | ~some
    size = np.where(some, largest, 1.0 if unit_interval else 0.0)
    return np.asarray(np.where(flat, 0.5 / (t + 1.0) * size**2 / t, 0.0))


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
