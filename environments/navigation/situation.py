"""What the navigation expert knows about one prompt: the trip so far and the optimum.

The conversation is rebuilt by replaying the history's executed proposals on
a fresh :class:`Trip` of the task, so the expert knows which requirements are
in force exactly as the environment does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentbus import PastRound, Task, rounds_so_far
from agentbus import prompt_sections as sections
from environments.navigation.constraints import Constraint
from environments.navigation.route import evaluate, violations
from environments.navigation.tasks import optima_of, trip_of
from environments.navigation.trip import Trip, parse_route

_PLAN_ROUTE = re.compile(r"Route:\s*([^\n(]+?)\s*(?:\(|\.?$)", re.MULTILINE)


@dataclass
class Situation:
    task: Task
    trip: Trip
    parts: dict[str, str]
    optima: list[tuple[tuple[str, ...], int]]
    last: PastRound | None
    #: requirements in force before the last round (what the last thought was about)
    before_last: list[Constraint]
    #: requirements in force right after the latest round that asked for a reflection
    after_flagged: list[Constraint] | None

    @property
    def optimum(self) -> tuple[str, ...]:
        return self.optima[self.trip.arrived][0]

    def route_of(self, text: str | None) -> tuple[str, ...] | None:
        if not text:
            return None
        parsed = parse_route(text, self.trip.city)
        return parsed if isinstance(parsed, tuple) else None

    def good(self, route: tuple[str, ...] | None, active: list[Constraint] | None = None) -> bool:
        """A route is good when it meets every requirement and is as short as the optimum."""
        if route is None:
            return False
        active = self.trip.active if active is None else active
        k = len(active) - len(self.trip.core)
        ev = evaluate(self.trip.city, route)
        return not violations(ev, active) and ev.tenths <= self.optima[k][1]

    def feasible(self, route: tuple[str, ...] | None) -> bool:
        return route is not None and not violations(
            evaluate(self.trip.city, route), self.trip.active
        )

    def plan_route(self) -> tuple[str, ...] | None:
        m = _PLAN_ROUTE.search(self.parts.get("Plan", ""))
        return self.route_of(f"propose[{m.group(1)}]") if m else None


def understand(task: Task, user: str) -> Situation:
    parts = sections(user)
    trip = trip_of(task)
    past = rounds_so_far(parts)
    before_last = list(trip.active)
    flagged: list[Constraint] | None = None
    for r in past:
        before_last = list(trip.active)
        if r.executed and not trip.done:
            result = trip.act(r.action)
            if not result.valid or result.broken or result.arrived is not None:
                flagged = list(trip.active)
        elif not r.executed:
            flagged = list(trip.active)
    return Situation(
        task, trip, parts, optima_of(task), past[-1] if past else None, before_last, flagged
    )
