"""One planning conversation: proposals in, the traveller's answers out.

Used by the environment for every step and by the simulated expert to replay
a prompt's history. A round is one ``propose[...]``. After each round the
traveller may add the next requirement of a hidden pool: whether one arrives
after round ``r`` is fixed by the task's seeded schedule (50% per round), so
the same task always unfolds the same way for the same number of rounds. A
route that meets every requirement in force, with nothing new arriving, is
accepted and ends the episode.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from environments.daytime import clock
from environments.navigation.city import HOTEL, City
from environments.navigation.constraints import Constraint
from environments.navigation.evaluation import Evaluation
from environments.navigation.route import evaluate, violations

_PROPOSE = re.compile(r"^\s*propose\s*\[(.*)\]\s*$", re.IGNORECASE | re.DOTALL)
_SPLIT = re.compile(r"\s*(?:,|->|>|;|\bthen\b)\s*", re.IGNORECASE)


def parse_route(text: str, city: City) -> tuple[str, ...] | str:
    """``propose[A, B, C]`` -> the stops (canonical names), or why it is not valid."""
    m = _PROPOSE.match(text.strip().strip("`").strip())
    if m is None:
        return (
            f"{text.strip()[:80]!r} is not an action here; write propose[Place, Place, ...] "
            "with the places in visiting order"
        )
    body = m.group(1).strip()
    if "\n" in body:
        return "the route must fit on one line"
    names = [n.strip().strip("'\"") for n in _SPLIT.split(body) if n.strip()]
    names = [n for n in names if n.lower() != HOTEL.lower()]
    stops: list[str] = []
    for n in names:
        place = city.place(n)
        if place is None:
            known = ", ".join(p.name for p in city.places)
            return f"there is no place called {n!r} in this city; the places are: {known}"
        if place.name in stops:
            return f"{place.name} appears twice; visit each place at most once"
        stops.append(place.name)
    return tuple(stops)


@dataclass
class StepResult:
    text: str
    valid: bool
    done: bool
    broken: list[Constraint] = field(default_factory=list)
    arrived: Constraint | None = None


@dataclass
class Trip:
    city: City
    core: Sequence[Constraint]
    pool: Sequence[Constraint]
    arrivals: Sequence[bool]
    rounds: int = 0
    arrived: int = 0
    last: tuple[str, ...] | None = None
    accepted: bool = False
    done: bool = False

    @property
    def active(self) -> list[Constraint]:
        return [*self.core, *self.pool[: self.arrived]]

    def requirements_text(self, ev: Evaluation | None = None) -> str:
        lines = []
        for c in self.active:
            mark = "" if ev is None else ("[met] " if c.holds(ev) else "[BROKEN] ")
            lines.append(f"- {mark}{c.text()}")
        return "\n".join(lines)

    def act(self, text: str) -> StepResult:
        """Apply one action text; always answers (never raises on bad input)."""
        if self.done:
            return StepResult("The planning has ended.", False, True)
        r = self.rounds
        self.rounds += 1
        parsed = parse_route(text, self.city)
        arrival = self._arrival(r)
        if isinstance(parsed, str):
            out = f"Invalid action: {parsed}."
            if arrival is not None:
                out += f"\n\nMeanwhile the traveller adds a requirement: {arrival.text()}."
            return StepResult(out, False, False, arrived=arrival)
        self.last = parsed
        ev = evaluate(self.city, parsed)
        before = self.active if arrival is None else self.active[:-1]
        broken = violations(ev, before)
        route = " > ".join([HOTEL, *parsed, HOTEL])
        lines = [
            f"Route: {route}: {ev.km:.1f} km, ${ev.cost:.2f}, back at the hotel at "
            f"{clock(ev.back)}.",
            *ev.timeline,
            *ev.hour_problems,
        ]
        if arrival is not None:
            lines.append(
                f"The traveller adds a requirement: {arrival.text()}. "
                "Please propose a route that meets all of these:"
            )
            lines.append(self.requirements_text(ev))
        elif broken:
            lines.append("The traveller cannot accept this route:")
            lines.append(self.requirements_text(ev))
        else:
            self.accepted = self.done = True
            lines.append("The route meets every requirement; the traveller accepts it.")
        return StepResult("\n".join(lines), True, self.done, broken, arrival)

    def _arrival(self, r: int) -> Constraint | None:
        if self.arrived < len(self.pool) and r < len(self.arrivals) and self.arrivals[r]:
            self.arrived += 1
            return self.pool[self.arrived - 1]
        return None
