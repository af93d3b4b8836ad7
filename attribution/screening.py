"""Leave-one-out screening: find the modules that cannot matter before playing the game.

``--screen loo`` spends a first share of the budget on the loo design
(every slot alone, every slot left out, empty and full: 2n + 2 episodes a
task). A module whose loo index (the mean of its leave-one-in and
leave-one-out effects, which is its Shapley value when no interaction
involves three or more modules) has its whole 95% interval inside
(-h/2, h/2), h the target half-width, cannot matter at that precision (the
half leaves room for what loo misses: interactions of three or more, which
the benchmark's games have): it is
held at its default side, and the rest of the budget goes to the game of
the modules that can. Modules dropped this way keep their loo estimate and
interval in the report. ``benchmarks/many_slots.py`` measures how often a
module whose true phi exceeds h is dropped (the screen's error).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attribution.estimates import Estimates
from attribution.estimators import Estimator
from attribution.estimators.designs import FloatArray, IntArray

#: share of the episode budget the screen spends (the rest plays the reduced game)
SCREEN_SHARE = 0.4


@dataclass(frozen=True)
class Screen:
    """Result of a screen: which slots stay in the game, and the loo estimates of all."""

    kept: tuple[int, ...]
    dropped: tuple[int, ...]
    estimates: Estimates
    halfwidth: float

    def summary(self) -> str:
        if not self.dropped:
            return f"screen: every module may matter at +/-{self.halfwidth:g}; none dropped"
        names = ", ".join(self.estimates.slots[i] for i in self.dropped)
        return (
            f"screen: {len(self.dropped)} module(s) cannot matter at +/-{self.halfwidth:g} "
            f"(loo interval inside half of it): {names}"
        )


def screen(
    phi_t: FloatArray,
    slots: tuple[str, ...],
    halfwidth: float,
    *,
    confidence: float = 0.95,
) -> Screen:
    """Screen from per-task loo values (tasks x n): drop slots whose interval is inside +/-h/2."""
    est = Estimator("loo", len(slots)).from_per_task(phi_t, slots, confidence=confidence)
    inside = (est.ci_low > -halfwidth / 2) & (est.ci_high < halfwidth / 2)
    kept = tuple(int(i) for i in np.flatnonzero(~inside))
    dropped = tuple(int(i) for i in np.flatnonzero(inside))
    return Screen(kept, dropped, est, halfwidth)


def lift_masks(masks: IntArray, kept: tuple[int, ...]) -> IntArray:
    """Masks over the kept slots (bit j = kept[j]) as masks over all slots."""
    m = np.asarray(masks, dtype=np.int64)
    out = np.zeros_like(m)
    for j, slot in enumerate(kept):
        out |= ((m >> j) & 1) << slot
    return out
