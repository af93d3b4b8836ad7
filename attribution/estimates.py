"""Attribution estimates with their uncertainty.

An :class:`Estimates` holds one value per slot together with the covariance
matrix of those values, so it can answer more than per-slot intervals: the
interval of a difference ``phi_i - phi_j`` and a range of plausible ranks for
each slot. Every interval comes in two flavours: the fixed-sample one
(normal, or t when paired by task) and the anytime-valid one (see
:func:`attribution.variance.anytime_factor`), which stays valid under
adaptive stopping.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from scipy import special  # quantiles only: scipy.stats costs ~0.6 s more per process start

from attribution.game import FloatArray
from attribution.variance import anytime_factor, skewed_bounds


class NotEstimable(ValueError):
    """Raised while a value cannot be estimated yet (a coalition has no data)."""


@dataclass(frozen=True, slots=True)
class Interval:
    value: float
    se: float
    low: float
    high: float

    @property
    def halfwidth(self) -> float:
        return (self.high - self.low) / 2.0

    def excludes_zero(self) -> bool:
        return self.low > 0.0 or self.high < 0.0


@dataclass(frozen=True, slots=True)
class SlotEstimate:
    slot: str
    value: float
    se: float
    ci_low: float
    ci_high: float
    cs_low: float
    cs_high: float

    def to_dict(self) -> dict[str, float]:
        """Every field but ``slot``, in field order (results.json keys these by slot)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "slot"}


@dataclass(frozen=True)
class Estimates:
    """Per-slot estimates of one index (Shapley, Banzhaf, ...) with uncertainty.

    ``method`` names how the standard errors were obtained (``independent``,
    ``paired``, ``covariance``, ``stratified``, ``kernel-paired``); ``df`` is
    the degrees of freedom of the t quantile (None: normal); ``units`` is the
    number of independent units (episodes or tasks) behind the estimate, and
    ``horizon`` the planned number of units the anytime-valid sequence is
    tuned for. ``skew`` (per slot, None: symmetric) is the skewness of the
    per-task values the fixed-sample interval accounts for
    (:func:`attribution.variance.skewed_bounds`): each side is then at least
    the t interval's, wider on the side of the long tail. ``limits`` is the
    range the index can take (a Shapley or Banzhaf value of a reward in [0, 1]
    lies in [-1, 1], a pairwise interaction in [-2, 2]): both intervals are
    clipped into it, which never turns a covering interval into a missing one
    (the truth is in the range), so coverage is unchanged while a 2-task run
    no longer prints [-3.67, 3.67]. Stopping rules read the unclipped
    half-widths (:meth:`halfwidths`), so clipping does not stop a run sooner.
    """

    kind: str
    slots: tuple[str, ...]
    values: FloatArray
    cov: FloatArray
    method: str
    confidence: float = 0.95
    df: float | None = None
    units: int = 0
    horizon: float = 1000.0
    episodes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    skew: FloatArray | None = None
    #: the range the value can take (None: unbounded): every printed bound lies in it
    limits: tuple[float, float] | None = None

    @property
    def se(self) -> FloatArray:
        return np.sqrt(np.maximum(np.diag(self.cov), 0.0))

    @property
    def quantile(self) -> float:
        a = 1.0 - self.confidence
        if self.df is None:
            return float(special.ndtri(1.0 - a / 2.0))
        return float(special.stdtrit(self.df, 1.0 - a / 2.0))

    @property
    def anytime_multiplier(self) -> float:
        """The confidence sequence's multiplier of ``se``, never below the fixed one's.

        The sequence is asymptotic (a normal boundary): at a few tasks it came
        out narrower than the t interval at the same point (184 of 240 slot
        intervals at 2 tasks in an audit), which no interval valid at every
        stop can be. So it is at least the t quantile.
        """
        return max(anytime_factor(self.units, self.horizon, 1.0 - self.confidence), self.quantile)

    def raw_bounds(self) -> tuple[FloatArray, FloatArray]:
        """(low, high) of the fixed-sample interval before clipping to ``limits``."""
        return skewed_bounds(self.values, self.se, self.quantile, self.skew, self.units)

    def clip(self, low: FloatArray, high: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``(low, high)`` clipped into ``limits`` (unchanged without limits)."""
        if self.limits is None:
            return np.asarray(low), np.asarray(high)
        lo, hi = self.limits
        return np.clip(low, lo, hi), np.clip(high, lo, hi)

    def bounds(self) -> tuple[FloatArray, FloatArray]:
        """(ci_low, ci_high) of the fixed-sample interval (asymmetric where ``skew`` says)."""
        return self.clip(*self.raw_bounds())

    def anytime_bounds(self) -> tuple[FloatArray, FloatArray]:
        """(cs_low, cs_high): the anytime-valid interval, clipped into ``limits``.

        It contains the fixed-sample interval at the same point (skew widening
        included), so it is never the narrower of the two.
        """
        cs = self.anytime_multiplier * self.se
        low, high = self.raw_bounds()
        return self.clip(np.minimum(self.values - cs, low), np.maximum(self.values + cs, high))

    def halfwidths(self, anytime: bool = False) -> FloatArray:
        """Half the width of each interval before clipping (what stopping rules compare).

        The anytime-valid one is symmetric. Unclipped, so a run does not stop
        sooner because its interval reached the edge of the possible range.
        """
        low, high = self.raw_bounds()
        if anytime:
            return np.maximum(self.anytime_multiplier * self.se, (high - low) / 2.0)
        return np.asarray((high - low) / 2.0)

    @property
    def ci_low(self) -> FloatArray:
        return self.bounds()[0]

    @property
    def ci_high(self) -> FloatArray:
        return self.bounds()[1]

    def index(self, slot: str) -> int:
        try:
            return self.slots.index(slot)
        except ValueError:
            raise KeyError(f"unknown slot {slot!r}") from None

    def __getitem__(self, slot: str) -> SlotEstimate:
        i = self.index(slot)
        se = float(self.se[i])
        low, high = self.bounds()
        cs_low, cs_high = self.anytime_bounds()
        v = float(self.values[i])
        return SlotEstimate(
            slot, v, se, float(low[i]), float(high[i]), float(cs_low[i]), float(cs_high[i])
        )

    def __iter__(self) -> Any:
        return (self[s] for s in self.slots)

    def value(self, slot: str) -> float:
        return float(self.values[self.index(slot)])

    def difference(self, a: str, b: str, *, anytime: bool = False) -> Interval:
        """Interval for ``phi_a - phi_b`` (uses their covariance)."""
        i, j = self.index(a), self.index(b)
        var = self.cov[i, i] + self.cov[j, j] - 2.0 * self.cov[i, j]
        se = float(np.sqrt(max(var, 0.0)))
        mult = self.anytime_multiplier if anytime else self.quantile
        d = float(self.values[i] - self.values[j])
        return Interval(d, se, d - mult * se, d + mult * se)

    def rank_intervals(self) -> dict[str, tuple[int, int]]:
        """Plausible ranks (1 = largest) per slot, simultaneous over all pairs.

        Slot i surely ranks below every j with phi_j - phi_i significantly
        positive, and above every j it beats significantly; the pairwise tests
        use a Bonferroni-corrected level so the whole set holds at
        ``confidence``.
        """
        k = len(self.slots)
        pairs = max(k * (k - 1) // 2, 1)
        a = (1.0 - self.confidence) / pairs
        if self.df is None:
            q = float(special.ndtri(1.0 - a / 2.0))
        else:
            q = float(special.stdtrit(self.df, 1.0 - a / 2.0))
        out: dict[str, tuple[int, int]] = {}
        for i, si in enumerate(self.slots):
            above = below = 0
            for j, sj in enumerate(self.slots):
                if i == j:
                    continue
                d = self.difference(si, sj)
                if d.value - q * d.se > 0:
                    below += 1  # i beats j
                elif d.value + q * d.se < 0:
                    above += 1  # j beats i
            out[si] = (1 + above, k - below)
        return out

    def to_dict(self) -> dict[str, Any]:
        ranks = self.rank_intervals()
        return {
            "kind": self.kind,
            "method": self.method,
            "confidence": self.confidence,
            "df": self.df,
            "units": self.units,
            "episodes": self.episodes,
            "slots": {
                s: {**self[s].to_dict(), "rank_low": ranks[s][0], "rank_high": ranks[s][1]}
                for s in self.slots
            },
        }
