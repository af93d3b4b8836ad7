"""Has a run drifted from the truth table? Per-coalition z-scores and one joint test.

A stored table says what a run of its kind should give: coalition S's mean
over one block of ``tasks_per_seed`` tasks (one run's task set, on a random
seed) has expectation v(S), and the table's covariance of the coalition means
over B blocks, times B, is the covariance of one block's means. A run of n
tasks per coalition is one such draw when n equals the block size (or, for a
generator that draws every task independently, a draw with that covariance
times ``tasks_per_seed / n``); the truth itself is uncertain by the table's
own covariance. So each coalition gets

    z(S) = (run mean - v(S)) / sqrt(block variance * T / n + table variance),

and the joint test over the k coalitions of the run is max |z(S)| against
the Bonferroni bound ``z* = Phi^-1(1 - alpha / (2k))``: under the normal
approximation its false-alarm rate is at most alpha, whatever the
correlation between coalitions (they share tasks, so it is lower). The rate
is also measured, by simulating runs from the table itself: normal draws with
the run's predicted covariance, the share whose max |z| passes z*.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from agentbus.sim.truth.table import TruthTable

#: the joint test's stated family-wise false-alarm rate per run
ALPHA = 0.01
#: simulated runs behind the measured false-alarm rate (its standard error is
#: below 0.001 at a 1% rate)
SIMULATED = 20_000


@dataclass(frozen=True)
class CoalitionDrift:
    """One coalition of the run against the truth."""

    key: str
    n: int
    mean: float
    truth: float
    sd: float

    @property
    def z(self) -> float:
        return (self.mean - self.truth) / self.sd if self.sd > 0 else math.nan


@dataclass(frozen=True)
class Drift:
    """Every coalition's z and the joint max-|z| test."""

    rows: tuple[CoalitionDrift, ...]
    threshold: float
    alpha: float
    #: share of runs simulated from the table whose max |z| passes the threshold
    measured_rate: float
    simulated: int

    @property
    def max_z(self) -> float:
        zs = [abs(r.z) for r in self.rows if not math.isnan(r.z)]
        return max(zs) if zs else math.nan

    @property
    def alarm(self) -> bool:
        return not math.isnan(self.max_z) and self.max_z > self.threshold


def threshold(k: int, alpha: float = ALPHA) -> float:
    """The Bonferroni bound on max |z| over ``k`` coalitions (two-sided)."""
    return float(ndtri(1.0 - alpha / (2 * max(1, k))))


def drift(
    table: TruthTable,
    run: Mapping[str, tuple[int, float]],
    keys: Sequence[str],
    *,
    alpha: float = ALPHA,
    simulated: int = SIMULATED,
    seed: int = 0,
) -> Drift:
    """Test ``run`` ({coalition key: (tasks, mean)}) against ``table`` over ``keys``.

    Coalitions missing from the run, or run on no task, are left out.
    """
    order = list(table.values)
    cov = np.asarray(table.covariance)
    blocks = table.provenance.seeds[1] - table.provenance.seeds[0]
    per_block = table.provenance.tasks_per_seed
    used = [k for k in keys if k in run and run[k][0] > 0]
    idx = [order.index(k) for k in used]
    n = np.array([run[k][0] for k in used], dtype=float)
    c = cov[np.ix_(idx, idx)]
    # one block's covariance, scaled to the run's tasks; plus the truth's own uncertainty
    scale = per_block / np.sqrt(np.outer(n, n))
    predicted = c * blocks * scale + c
    sd = np.sqrt(np.clip(np.diag(predicted), 0.0, None))
    rows = tuple(
        CoalitionDrift(k, int(run[k][0]), float(run[k][1]), table.values[k].mean, float(s))
        for k, s in zip(used, sd, strict=True)
    )
    bound = threshold(len(used), alpha)
    rate = math.nan
    if used and simulated > 0:
        safe = np.where(sd > 0, sd, 1.0)
        corr = predicted / np.outer(safe, safe)
        rng = np.random.default_rng(seed)
        draws = rng.multivariate_normal(np.zeros(len(used)), corr, size=simulated, method="eigh")
        rate = float(np.mean(np.max(np.abs(draws), axis=1) > bound))
    return Drift(rows, bound, alpha, rate, simulated)


__all__ = ["ALPHA", "SIMULATED", "CoalitionDrift", "Drift", "drift", "threshold"]
