"""The traveller's requirements: small predicates on an evaluated route.

Each has a kind and a value, a sentence for the traveller to say, and a
check. ``hours`` (every visit inside opening hours) is always in force; the
others come as the three core requirements at the start or arrive later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from environments.daytime import clock

if TYPE_CHECKING:
    from environments.navigation.evaluation import Evaluation

KINDS = ("hours", "budget", "back_by", "category", "visit", "avoid", "avoid_category", "min_visits")

#: what the traveller says for each kind of requirement, from its value
_SAY: dict[str, Callable[[Any], str]] = {
    "hours": lambda v: "every visit must fit inside the place's opening hours",
    "budget": lambda v: f"tickets and taxi fares together must stay within ${float(v):.0f}",
    "back_by": lambda v: f"be back at the hotel by {clock(int(v))}",
    "category": lambda v: f"visit at least one {v}",
    "visit": lambda v: f"include {v}",
    "avoid": lambda v: f"do not go to {v}",
    "avoid_category": lambda v: f"no {v} at all",
    "min_visits": lambda v: f"visit at least {v} places",
}
#: whether an evaluated route meets each kind of requirement with its value
_HOLDS: dict[str, Callable[[Evaluation, Any], bool]] = {
    "hours": lambda ev, v: not ev.hour_problems,
    "budget": lambda ev, v: ev.cost <= float(v) + 1e-9,
    "back_by": lambda ev, v: ev.back <= int(v),
    "category": lambda ev, v: v in ev.categories,
    "visit": lambda ev, v: v in ev.stops,
    "avoid": lambda ev, v: v not in ev.stops,
    "avoid_category": lambda ev, v: v not in ev.categories,
    "min_visits": lambda ev, v: len(ev.stops) >= int(v),
}


@dataclass(frozen=True)
class Constraint:
    kind: str
    value: Any = None

    def text(self) -> str:
        """The sentence the traveller says (an unknown kind reads as ``min_visits``)."""
        return _SAY.get(self.kind, _SAY["min_visits"])(self.value)

    def holds(self, ev: Evaluation) -> bool:
        check = _HOLDS.get(self.kind)
        if check is None:
            raise ValueError(f"unknown constraint kind {self.kind!r}")
        return check(ev, self.value)

    def to_json(self) -> list[Any]:
        return [self.kind, self.value]

    @classmethod
    def from_json(cls, data: list[Any]) -> Constraint:
        kind, value = data
        if kind not in KINDS:
            raise ValueError(f"unknown constraint kind {kind!r}")
        return cls(str(kind), value)
