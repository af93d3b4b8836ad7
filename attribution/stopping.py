"""When an adaptive run may stop: on the question the user asked (``--stop``).

``halfwidth``
    Every slot's fixed-sample 95% interval is narrower than the target, with
    at least ``MIN_CLUSTERS`` tasks in (Chow-Robbins; what ``--adaptive``
    always did, ``--target-halfwidth`` sets the target). Its guarantee is
    the interval's coverage at the stop, measured in docs/design-notes.md.
``mvp``
    The top slot is identified: its difference to every other slot is
    positive under anytime-valid intervals at 95% jointly.
``ranking``
    The whole order is identified: every pairwise difference is signed under
    the same intervals.

Why anytime-valid for ``mvp`` and ``ranking``: they stop *when a test
succeeds*, and looking after every task at an ordinary test makes a wrong
"identified" far likelier than 5% when two slots are close. The
confidence sequence (:func:`attribution.variance.anytime_factor`) holds at
every task count at once. A Bonferroni split over n - 1 pairs is enough
for both rules, although the top slot and the order are chosen from the
data: naming a wrong top means the true top's interval against the named
slot missed (one of the n - 1 pairs that contain the true top), and a
wrong order inverts at least one pair that is adjacent in the true order
(n - 1 pairs again). Those pairs are fixed by the truth, not by the data,
so with probability 95% all of them cover and neither rule errs.
``tests/attribution/test_stop_rules.py`` replays runs from real simulator outcomes and checks
the error rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from attribution.estimates import Estimates
from attribution.variance import MIN_CLUSTERS, SKEW_SHRINK_REWARD, anytime_factor

RULES = ("halfwidth", "mvp", "ranking")


def _pairwise_bounds(est: Estimates) -> tuple[np.ndarray, np.ndarray]:
    """(difference phi_i - phi_j, simultaneous anytime half-width) for every pair."""
    k = len(est.values)
    alpha = (1.0 - est.confidence) / max(k - 1, 1)
    mult = anytime_factor(est.units, est.horizon, alpha)
    var = np.diag(est.cov)
    dvar = var[:, None] + var[None, :] - 2.0 * est.cov
    diff = est.values[:, None] - est.values[None, :]
    return diff, mult * np.sqrt(np.maximum(dvar, 0.0))


def top_slot(est: Estimates) -> str | None:
    """The slot whose lower bounds beat every other slot's, or None."""
    diff, hw = _pairwise_bounds(est)
    k = len(est.values)
    for i in range(k):
        if all(diff[i, j] - hw[i, j] > 0 for j in range(k) if j != i):
            return est.slots[i]
    return None


def ranking(est: Estimates) -> list[str] | None:
    """The slots in order when every pair is separated, or None."""
    diff, hw = _pairwise_bounds(est)
    separated = np.abs(diff) > hw
    np.fill_diagonal(separated, True)
    if not bool(np.all(separated)):
        return None
    order = np.argsort(-est.values, kind="stable")
    return [est.slots[int(i)] for i in order]


def reached(est: Estimates, rule: str, target: float | None, tasks: int) -> bool:
    """Has ``rule`` been met by ``est`` after ``tasks`` tasks?"""
    if tasks < MIN_CLUSTERS:
        return False
    if rule == "halfwidth":
        return target is not None and bool(np.all(est.halfwidths() <= target))
    if rule == "mvp":
        return top_slot(est) is not None
    if rule == "ranking":
        return ranking(est) is not None
    raise ValueError(f"unknown stop rule {rule!r}")


def describe(rule: str, target: float | None) -> str:
    """What the rule waits for, in words (stop reasons, status lines)."""
    if rule == "mvp":
        return "the top slot is identified (simultaneous anytime-valid 95% intervals)"
    if rule == "ranking":
        return "every slot's rank is identified (simultaneous anytime-valid 95% intervals)"
    return f"every 95% interval is narrower than +/-{target:g} ({MIN_CLUSTERS} tasks or more in)"


def running_estimates(
    phi_t: np.ndarray,
    slots: tuple[str, ...],
    *,
    horizon_tasks: float,
    start: int = MIN_CLUSTERS,
    confidence: float = 0.95,
) -> Iterator[Estimates]:
    """The estimate after each of tasks ``start``..T of a stream of per-task values (lazily).

    What an adaptive run sees task by task (the interval over tasks of
    :mod:`attribution.estimators`, with its skewness and no-spread
    corrections, from running sums), for replaying stopping rules on stored
    per-task outcomes of rewards (tests/attribution/test_stop_rules.py,
    benchmarks/many_slots.py).
    """
    t_all = phi_t.shape[0]
    csum = np.cumsum(phi_t, axis=0)
    couter = np.cumsum(phi_t[:, :, None] * phi_t[:, None, :], axis=0)
    # the corrections of attribution.variance.per_task_interval, for every t at once
    t = np.arange(1, t_all + 1, dtype=np.float64)[:, None]
    mean = csum / t
    m2 = np.maximum(np.cumsum(phi_t**2, axis=0) - t * mean**2, 0.0)
    m3 = np.cumsum(phi_t**3, axis=0) - 3.0 * mean * np.cumsum(phi_t**2, axis=0) + 2.0 * t * mean**3
    spread = np.maximum(
        np.maximum.accumulate(phi_t, axis=0) - mean, mean - np.minimum.accumulate(phi_t, axis=0)
    )
    largest = spread.max(axis=1, keepdims=True)
    some = largest > 1e-15
    flat = (spread <= 1e-9 * np.where(some, largest, 1.0)) | ~some
    floor = np.where(flat, 0.5 / (t + 1.0) * np.where(some, largest, 1.0) ** 2 / t, 0.0)
    tt = np.maximum(t, 3.0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        g = tt * np.sqrt(tt - 1.0) / (tt - 2.0) * m3 / np.maximum(m2, 1e-300) ** 1.5
    g = np.where(flat | (t < 3), 0.0, g)
    skew = np.sign(g) * np.maximum(np.abs(g) - SKEW_SHRINK_REWARD * np.sqrt(6.0 / t), 0.0)
    k = phi_t.shape[1]
    tv = t[:, :, None]
    cov_all = (couter - tv * mean[:, :, None] * mean[:, None, :]) / np.maximum(tv - 1.0, 1.0) / tv
    cov_all[:, np.arange(k), np.arange(k)] += floor
    for n in range(max(start, 2), t_all + 1):
        i = n - 1
        yield Estimates(
            kind="shapley",
            slots=slots,
            values=mean[i],
            cov=cov_all[i],
            method="replay",
            confidence=confidence,
            df=float(n - 1),
            units=n,
            horizon=horizon_tasks,
            episodes=n,
            skew=skew[i],
            limits=(-1.0, 1.0),
        )


def first_stop(estimates: Iterable[Estimates], rule: str, target: float | None) -> Estimates:
    """The first estimate at which ``rule`` is met, else the last one (the run's end)."""
    est: Estimates | None = None
    for est in estimates:
        if reached(est, rule, target, est.units):
            return est
    if est is None:
        raise ValueError("no estimates to stop on")
    return est
