"""What walking a route gives: stops, distance, cost, return time, timeline, problems.

:mod:`environments.navigation.route` fills it in and the requirements of
:mod:`environments.navigation.constraints` read it; it stands alone so that
those two need not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from environments.navigation.city import DAY_START


@dataclass
class Evaluation:
    stops: tuple[str, ...]
    tenths: int = 0
    cost: float = 0.0
    back: int = DAY_START
    categories: frozenset[str] = frozenset()
    timeline: list[str] = field(default_factory=list)
    hour_problems: list[str] = field(default_factory=list)

    @property
    def km(self) -> float:
        return self.tenths / 10
