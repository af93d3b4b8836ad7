"""Pass rates with intervals that hold at 0/n and n/n and count tasks, not replays.

Every pass-rate table (MMAU's shift tables, the per-coalition success rates,
whole-agent accuracies, the Pareto front's measured points) uses
:func:`rate_interval`:

* the Wilson score interval, not the Wald one: Wald at n = 30 covers about
  78% at p = 0.95 and collapses to a point at 0/n and n/n, where Wilson
  keeps a width (0/30 gives [0, 0.114]);
* with Brown, Cai and DasGupta's (2001) modification at one to three
  successes (or failures): there plain Wilson covers as little as 0.84
  (p = 0.009 over 20 tasks, summing the binomial pmf exactly), because its
  lower bound sits above the true rate for a whole range of small p; the
  one-sided Poisson bound lifts the least coverage over p <= 0.2 to 0.916 at
  n = 10-50 and changes no interval with more than three of each;
* task-clustered when a task was played more than once (``--repeats``):
  replays of one task are not new tasks, so the interval uses the effective
  number of units ``n_eff = episodes / deff``, with the design effect
  ``deff`` the ratio of the task-clustered variance of the mean to the
  variance episodes would have if independent (Kish 1965). ``n_eff`` is kept
  between the number of tasks (every replay a copy) and of episodes (every
  replay new). When the rate is 0 or 1 the design effect is undefined and
  the tasks are the units.

Graded rewards (in [0, 1]) use the same formula with the mean as the rate;
the Bernoulli variance bounds theirs, so the interval is conservative.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special  # not scipy.stats: importing it costs every process ~0.6 s


def wilson(
    p: float, n: float, confidence: float = 0.95, *, boundary: bool = True
) -> tuple[float, float]:
    """Wilson score interval of a rate ``p`` observed over ``n`` (possibly effective) units.

    With ``boundary`` (the default, and what every table uses) the bound on
    the side of 0 (or 1) is lowered (raised) to the one-sided Poisson bound
    ``chi2_{2x, alpha} / (2n)`` when only ``x`` in (0, x*] successes (failures)
    were seen, x* = 2 up to n = 50 and 3 above (Brown, Cai and DasGupta 2001,
    section 4.1.1); it never narrows Wilson's interval. ``x = p n`` need not
    be whole (graded rewards, an effective n). ``boundary=False`` is the
    plain score interval, kept for the test that shows why it is not used.
    """
    if n <= 0:
        return 0.0, 1.0
    z = float(special.ndtri(0.5 + confidence / 2.0))
    z2 = z * z
    centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n)
    half = z * float(np.sqrt(max(p * (1.0 - p), 0.0) / n + z2 / (4.0 * n * n))) / (1.0 + z2 / n)
    low, high = max(centre - half, 0.0), min(centre + half, 1.0)
    if boundary:
        alpha = 1.0 - confidence
        most = (2.0 if n <= 50 else 3.0) + 1e-9
        hits, misses = p * n, (1.0 - p) * n
        if 1e-12 < hits <= most:
            low = min(low, float(special.gammaincinv(hits, alpha)) / n)  # chi2_{2x,a} / 2n
        if 1e-12 < misses <= most:
            high = max(high, 1.0 - float(special.gammaincinv(misses, alpha)) / n)
    return low, high


def rate_interval(
    rewards: Sequence[float] | np.ndarray,
    tasks: Sequence[Any] | np.ndarray | None = None,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Mean reward with its Wilson interval (task-clustered when tasks repeat).

    Returns ``mean``, ``tasks`` (distinct tasks, the units), ``episodes``,
    ``n_eff`` (the n the interval used), ``ci_low``, ``ci_high`` and
    ``interval`` (``wilson`` or ``wilson-clustered``); no interval without data.
    """
    r = np.asarray(rewards, dtype=np.float64)
    n = len(r)
    if n == 0:
        return {
            "mean": None,
            "tasks": 0,
            "episodes": 0,
            "n_eff": 0.0,
            "ci_low": None,
            "ci_high": None,
            "interval": None,
        }
    ids = np.arange(n) if tasks is None else np.unique(np.asarray(tasks), return_inverse=True)[1]
    t = int(ids.max()) + 1
    p = float(r.mean())
    n_eff = float(n)
    method = "wilson"
    if t < n:
        method = "wilson-clustered"
        bernoulli = p * (1.0 - p) / n
        if bernoulli <= 0.0 or t < 2:
            n_eff = float(t)
        else:
            u = np.bincount(ids, weights=r - p, minlength=t) / n
            clustered = t / (t - 1) * float(np.sum(u * u))
            n_eff = float(np.clip(n * bernoulli / max(clustered, 1e-300), t, n))
    low, high = wilson(p, n_eff, confidence)
    return {
        "mean": p,
        "tasks": t,
        "episodes": n,
        "n_eff": n_eff,
        "ci_low": low,
        "ci_high": high,
        "interval": method,
    }
