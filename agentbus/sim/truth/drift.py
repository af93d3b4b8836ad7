"""Has a run drifted from the truth table? Per-coalition z-scores and two joint tests.

A stored table says what a run of its kind should give: coalition S's mean
over one block of ``T = tasks_per_seed`` tasks (one run's task set, on a
random seed) has expectation v(S), and the table's covariance of the
coalition means over B blocks, times B, is the covariance of one block's
means. A run of n tasks is the first n tasks of a block, a random sample of
its T (stratified) tasks: with w the per-task variance inside a block
(block variance times T) and s the variance of one task drawn from the whole
population, its mean varies by

    (w + (s - w) (T - n) / (T - 1)) / n

(the finite-population form: w / T at a whole block, about s / n for a
couple of tasks). The table gives w; s is at most p (1 - p) for a reward in
[0, 1] with mean p, and that bound is what is used (scaling the block
variance by T / n alone, as the test did, understates a 2-task run's
spread). Plus the truth's own uncertainty, the table's covariance. So each
coalition gets

    z(S) = (run mean - v(S)) / sqrt(that variance + table variance),

and two joint tests look at all k coalitions of the run at once:

* max |z(S)|: one coalition far off (a change that breaks one module);
* the mean shift: the mean over the coalitions of (run mean - v(S)), over
  its standard deviation under the same covariance: every coalition moved a
  little the same way (a change to shared code: the parser, the prompt, the
  simulator), which max |z| mostly misses (docs/statistics.md measures
  both). Not the generalised-least-squares shift (the likelihood-ratio
  test under a normal model): its weights lean on the finest structure of
  the table's covariance, and on real per-task outcomes of math (the pool
  of tests/data/per_task, 20 blocks) its statistic varied 1.6 times as much
  between blocks as the table predicts, against 1.1 times for the plain mean.

Each gets half of the stated false-alarm rate ``alpha``. Their thresholds are
not normal quantiles: at 2-5 tasks, or for a coalition that almost never
succeeds, the run means are far from normal (a Bonferroni bound on max |z|
flagged 18% of 2-task runs resampled from the tools pool). They are the
quantiles of the same statistics over runs simulated task by task from the
table at the run's own size (:mod:`agentbus.sim.truth.null`), so the stated
rate holds at every size; the simulated share flagged by either test is
reported beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agentbus.sim.truth import null
from agentbus.sim.truth.table import TruthTable

#: the joint tests' stated family-wise false-alarm rate per run (half to each test)
ALPHA = 0.01
#: simulated runs behind the thresholds (fewer for long runs: ``null.runs_for``)
SIMULATED = 20_000
#: a statistic this close to its threshold counts as at it (the simulated runs take the
#: same discrete values as a real one, up to rounding)
TIE = 1e-9


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
    """Every coalition's z, the max-|z| test and the mean-shift test."""

    rows: tuple[CoalitionDrift, ...]
    #: max |z| above this flags drift
    threshold: float
    alpha: float
    #: share of the simulated runs that either test flags (at most ``alpha``)
    measured_rate: float
    simulated: int
    #: mean over the coalitions of (run mean - truth), its sd, and |shift z| above which
    #: the mean-shift test flags
    shift: float = math.nan
    shift_sd: float = math.nan
    shift_threshold: float = math.nan

    @property
    def max_z(self) -> float:
        zs = [abs(r.z) for r in self.rows if not math.isnan(r.z)]
        return max(zs) if zs else math.nan

    @property
    def shift_z(self) -> float:
        return self.shift / self.shift_sd if self.shift_sd > 0 else math.nan

    @property
    def alarm(self) -> bool:
        far = not math.isnan(self.max_z) and self.max_z > self.threshold + TIE
        moved = not math.isnan(self.shift_z) and abs(self.shift_z) > self.shift_threshold + TIE
        return far or moved


@dataclass(frozen=True)
class _Calibration:
    threshold: float
    shift_threshold: float
    rate: float
    runs: int


_CALIBRATIONS: dict[tuple[object, ...], _Calibration] = {}


def _statistics(
    diff: np.ndarray, sd: np.ndarray, weights: np.ndarray, shift_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """max |z| and |mean-shift z| of each row of ``diff`` (run means minus truth)."""
    live = sd > 0
    far = np.max(np.abs(diff[:, live]) / sd[live], axis=1)
    moved = np.abs(diff @ weights) / shift_sd if shift_sd > 0 else np.zeros(len(diff))
    return far, moved


def _calibrate(
    table: TruthTable,
    idx: list[int],
    tasks: np.ndarray,
    sd: np.ndarray,
    weights: np.ndarray,
    shift_sd: float,
    alpha: float,
    simulated: int,
    seed: int,
) -> _Calibration:
    """Thresholds for both tests from runs simulated from ``table`` (cached per run shape)."""
    truth = np.array([v.mean for v in table.values.values()])[idx]
    key: tuple[object, ...] = (table.env, table.default, table.test, tuple(truth), tuple(idx))
    key += (tuple(tasks), alpha, simulated, seed)
    if key in _CALIBRATIONS:
        return _CALIBRATIONS[key]
    cov = np.asarray(table.covariance)[np.ix_(idx, idx)]
    runs = null.runs_for(tasks, simulated)
    rng = np.random.default_rng(seed)
    _, corr, share = predicted(table, idx, tasks)
    means = null.simulated_means(truth, cov, corr, share, tasks, runs, rng)
    far, moved = _statistics(means - truth, sd, weights, shift_sd)
    # the smallest values each statistic passes in at most alpha/2 of the runs
    bound = float(np.quantile(far, 1.0 - alpha / 2, method="higher"))
    shift_bound = float(np.quantile(moved, 1.0 - alpha / 2, method="higher"))
    rate = float(np.mean((far > bound + TIE) | (moved > shift_bound + TIE)))
    _CALIBRATIONS[key] = found = _Calibration(bound, shift_bound, rate, runs)
    return found


def predicted(
    table: TruthTable, idx: Sequence[int], tasks: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The covariance of a run's coalition means (rows ``idx``, ``tasks`` each), per module doc.

    Also the per-task correlation and each coalition's per-task variance over
    the 0/1 one, which the simulated runs reproduce (:mod:`null`).
    """
    c = np.asarray(table.covariance)[np.ix_(idx, idx)]
    blocks = table.provenance.seeds[1] - table.provenance.seeds[0]
    size = table.provenance.tasks_per_seed
    p = np.array([v.mean for v in table.values.values()])[list(idx)]
    within = c * blocks * size
    inside = np.sqrt(np.clip(np.diag(within), 0.0, None))
    safe = np.where(inside > 0, inside, 1.0)
    corr = within / np.outer(safe, safe)
    whole = np.sqrt(np.maximum(p * (1 - p), np.diag(within)))
    pair = np.sqrt(np.outer(tasks, tasks).astype(float))
    share = np.clip((size - pair) / (size - 1), 0.0, 1.0) if size > 1 else np.zeros_like(pair)
    per_task = within + (corr * np.outer(whole, whole) - within) * share
    zero = p * (1 - p) <= 0
    spread = np.where(zero, 0.0, np.diag(per_task) / np.where(zero, 1.0, p * (1 - p)))
    return per_task / pair + c, corr, spread


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
    ``simulated=0`` skips the calibration (no verdict: thresholds are NaN).
    """
    order = list(table.values)
    used = [k for k in keys if k in run and run[k][0] > 0]
    idx = [order.index(k) for k in used]
    n = np.array([run[k][0] for k in used], dtype=int)
    cov, _, _ = predicted(table, idx, n)
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    rows = tuple(
        CoalitionDrift(k, int(run[k][0]), float(run[k][1]), table.values[k].mean, float(s))
        for k, s in zip(used, sd, strict=True)
    )
    live = sd > 0
    if not live.any():
        return Drift(rows, math.nan, alpha, math.nan, 0)
    # the plain mean over the coalitions that vary (see the module docstring: not GLS)
    weights = np.where(live, 1.0 / live.sum(), 0.0)
    shift_sd = float(np.sqrt(max(0.0, weights @ cov @ weights)))
    shift = float(sum(w * (r.mean - r.truth) for w, r in zip(weights, rows, strict=True)))
    if simulated <= 0:
        return Drift(rows, math.nan, alpha, math.nan, 0, shift, shift_sd, math.nan)
    cal = _calibrate(table, idx, n, sd, weights, shift_sd, alpha, simulated, seed)
    return Drift(
        rows, cal.threshold, alpha, cal.rate, cal.runs, shift, shift_sd, cal.shift_threshold
    )


__all__ = ["ALPHA", "SIMULATED", "CoalitionDrift", "Drift", "drift", "predicted"]
