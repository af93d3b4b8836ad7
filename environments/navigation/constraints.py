"""The traveller's requirements: small predicates on an evaluated route.

Each has a kind and a value, a sentence for the traveller to say, and a
check. ``hours`` (every visit inside opening hours) is always in force; the
others come as the three core requirements at the start or arrive later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from environments.daytime import clock

if TYPE_CHECKING:
    from environments.navigation.evaluation import Evaluation

KINDS = ("hours", "budget", "back_by", "category", "visit", "avoid", "avoid_category", "min_visits")


@dataclass(frozen=True)
class Constraint:
    kind: str
    value: Any = None

    def text(self) -> str:
        v = self.value
        if self.kind == "hours":
            return "every visit must fit inside the place's opening hours"
        if self.kind == "budget":
            return f"tickets and taxi fares together must stay within ${float(v):.0f}"
        if self.kind == "back_by":
            return f"be back at the hotel by {clock(int(v))}"
        if self.kind == "category":
            return f"visit at least one {v}"
        if self.kind == "visit":
            return f"include {v}"
        if self.kind == "avoid":
            return f"do not go to {v}"
        if self.kind == "avoid_category":
            return f"no {v} at all"
        return f"visit at least {v} places"

    def holds(self, ev: Evaluation) -> bool:
        v = self.value
        if self.kind == "hours":
            return not ev.hour_problems
        if self.kind == "budget":
            return ev.cost <= float(v) + 1e-9
        if self.kind == "back_by":
            return ev.back <= int(v)
        if self.kind == "category":
            return v in ev.categories
        if self.kind == "visit":
            return v in ev.stops
        if self.kind == "avoid":
            return v not in ev.stops
        if self.kind == "avoid_category":
            return v not in ev.categories
        if self.kind == "min_visits":
            return len(ev.stops) >= int(v)
        raise ValueError(f"unknown constraint kind {self.kind!r}")

    def to_json(self) -> list[Any]:
        return [self.kind, self.value]

    @classmethod
    def from_json(cls, data: list[Any]) -> Constraint:
        kind, value = data
        if kind not in KINDS:
            raise ValueError(f"unknown constraint kind {kind!r}")
        return cls(str(kind), value)
