"""The pass-rate interval holds its level near 0/n and n/n, where plain Wilson does not.

Coverage is exact, not simulated: for a true rate p over n tasks it is the
sum of the binomial pmf over the successes x whose interval holds p, so the
test costs milliseconds and has no seed. Plain Wilson (``boundary=False``)
is the deliberately wrong method: its lower bound sits above p for a range
of small p, and it covers about 0.84 there.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from attribution.rates import rate_interval, wilson

GRID = np.linspace(0.0005, 0.2, 400)  # small rates; near 1 is checked by symmetry


def least_coverage(n: int, boundary: bool) -> float:
    xs = np.arange(n + 1)
    bounds = np.array([wilson(x / n, n, 0.95, boundary=boundary) for x in xs])
    worst = 1.0
    for p in np.concatenate([GRID, 1.0 - GRID]):
        holds = (bounds[:, 0] <= p) & (p <= bounds[:, 1])
        worst = min(worst, float(stats.binom.pmf(xs, n, p)[holds].sum()))
    return worst


def test_modified_wilson_covers_small_rates_where_plain_wilson_does_not() -> None:
    for n in (10, 20, 30, 60):
        assert least_coverage(n, boundary=True) > 0.91, n  # measured 0.916-0.929
        assert least_coverage(n, boundary=False) < 0.87, n  # measured 0.838-0.861


def test_modification_only_widens_and_only_at_one_to_three_successes() -> None:
    for n in (20, 60):
        most = 2 if n <= 50 else 3
        for x in range(n + 1):
            low, high = wilson(x / n, n)
            plain_low, plain_high = wilson(x / n, n, boundary=False)
            assert low <= plain_low and high >= plain_high
            assert (low < plain_low) == (0 < x <= most), (n, x)
            assert (high > plain_high) == (0 < n - x <= most), (n, x)


def test_every_rate_table_gets_the_modified_bound() -> None:
    # 1 of 20 tasks: the Poisson bound chi2_{2, 0.05} / 40 = 0.00256, not Wilson's 0.0089
    row = rate_interval([1.0] + [0.0] * 19)
    assert abs(row["ci_low"] - stats.chi2.ppf(0.05, 2) / 40) < 1e-12
    assert wilson(0.05, 20, boundary=False)[0] > 0.008
