"""What a run drawn from a truth table looks like, task by task: the drift test's null.

The drift test (:mod:`agentbus.sim.truth.drift`) needs the distribution of
its statistics for a run that *is* a draw from the table, at the run's own
size. A normal approximation of the run means fails at 2-5 tasks (a mean of
two 0/1 outcomes takes three values) and wherever a coalition almost never
or almost always succeeds, so the thresholds come from simulated runs
instead, each built task by task:

* the truth itself is uncertain: each simulated run first draws its
  coalition values from a normal with the table's mean and covariance;
* each task then gives coalition S, with probability ``share[S]``, a 0/1
  outcome with that success probability, and otherwise exactly that
  probability (so its variance is ``share[S]`` times the 0/1 one, matched to
  what the run's size calls for: see :func:`agentbus.sim.truth.drift.predicted`);
  the 0/1 outcomes are correlated through a latent normal whose correlations
  reproduce the table's (tetrachoric correlations, solved per pair with
  Owen's T function), and one draw per task picks which coalitions are 0/1.

0/1 outcomes are the widest a reward in [0, 1] with a given mean can spread,
so the simulated runs keep the lumps and the skew of the real ones at small
sizes (for partial rewards they are rougher than the real runs, and the test
is conservative there). Its false-alarm rate and power on real per-task
outcomes: ``benchmarks/truth_drift.py --calibration`` (docs/statistics.md).
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr, ndtri, owens_t

#: how far from 0 and 1 a success probability is kept for the latent thresholds
EDGE = 1e-6
#: normal draws one calibration may spend (runs x tasks x coalitions)
DRAW_BUDGET = 24_000_000
#: the fewest simulated runs a calibration uses, however long the run
MIN_RUNS = 4_000


def _orthant(h: np.ndarray, k: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """P(X < h, Y < k) for a standard bivariate normal with correlation ``rho`` (Owen 1956)."""
    h = np.where(np.abs(h) < 1e-9, 1e-9, h)
    k = np.where(np.abs(k) < 1e-9, 1e-9, k)
    s = np.sqrt(1.0 - rho * rho)
    beta = np.where(h * k > 0, 0.0, 0.5)
    return (
        0.5 * ndtr(h)
        + 0.5 * ndtr(k)
        - owens_t(h, (k - rho * h) / (h * s))
        - owens_t(k, (h - rho * k) / (k * s))
        - beta
    )


def latent_correlation(p: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """Latent normal correlations whose thresholded 0/1 outcomes have correlation ``corr``.

    ``p``: each coalition's success probability. Pairs whose target is not
    reachable with those margins get the nearest reachable one; the matrix is
    then made positive semi-definite (eigenvalues clipped) with a unit diagonal.
    """
    k = len(p)
    q = np.clip(p, EDGE, 1.0 - EDGE)
    cut = ndtri(q)
    i, j = np.triu_indices(k, 1)
    spread = np.sqrt(q[i] * (1 - q[i]) * q[j] * (1 - q[j]))
    joint = q[i] * q[j] + np.nan_to_num(corr[i, j]) * spread
    joint = np.clip(joint, np.maximum(0.0, q[i] + q[j] - 1.0), np.minimum(q[i], q[j]))
    low, high = np.full(len(i), -0.999), np.full(len(i), 0.999)
    for _ in range(50):  # the orthant probability rises with rho: bisect every pair at once
        mid = (low + high) / 2
        above = _orthant(cut[i], cut[j], mid) > joint
        high = np.where(above, mid, high)
        low = np.where(above, low, mid)
    latent = np.eye(k)
    latent[i, j] = latent[j, i] = (low + high) / 2
    values, vectors = np.linalg.eigh(latent)
    fixed = (vectors * np.clip(values, 1e-8, None)) @ vectors.T
    scale = np.sqrt(np.diag(fixed))
    return np.asarray(fixed / np.outer(scale, scale))


def _root(cov: np.ndarray) -> np.ndarray:
    """A matrix ``L`` with ``L @ L.T == cov`` for a positive semi-definite ``cov``."""
    values, vectors = np.linalg.eigh(cov)
    return np.asarray(vectors * np.sqrt(np.clip(values, 0.0, None)))


def simulated_means(
    truth: np.ndarray,
    truth_cov: np.ndarray,
    corr: np.ndarray,
    share: np.ndarray,
    tasks: np.ndarray,
    runs: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``runs`` x k coalition means of runs drawn from the table, ``tasks[c]`` tasks each.

    ``corr``: the coalitions' correlation per task; ``share``: each
    coalition's per-task variance over the 0/1 one (module docstring). A
    coalition run on fewer tasks than another uses the first of the same
    tasks (coalitions of a run share their tasks).
    """
    k = len(truth)
    lam = np.clip(share, 1e-9, 1.0)
    # only a share min(lam_i, lam_j) of tasks has both 0/1: raise their correlation to match
    boost = np.sqrt(np.outer(lam, lam)) / np.minimum.outer(lam, lam)
    latent = _root(latent_correlation(truth, np.clip(np.nan_to_num(corr) * boost, -1.0, 1.0)))
    values = truth + rng.standard_normal((runs, k)) @ _root(truth_cov).T
    values = np.clip(values, 0.0, 1.0)
    cut = ndtri(np.clip(values, EDGE, 1.0 - EDGE))
    sums = np.zeros((runs, k))
    for t in range(int(tasks.max())):
        binary = (rng.standard_normal((runs, k)) @ latent.T) < cut
        lumpy = rng.random((runs, 1)) < lam
        sums += np.where(lumpy, binary, values) * (tasks > t)
    return sums / tasks


def runs_for(tasks: np.ndarray, wanted: int) -> int:
    """How many runs to simulate: ``wanted``, fewer for long runs (the draw budget)."""
    cost = max(1, int(tasks.max()) * len(tasks))
    return max(MIN_RUNS, min(wanted, DRAW_BUDGET // cost))


__all__ = ["latent_correlation", "runs_for", "simulated_means"]
