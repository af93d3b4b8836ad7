"""Flights, calendars and the cost of a booking; the exact optimum.

A flight occupies its traveller from :data:`AIRPORT_MINUTES` before take-off
until landing; overlapping a calendar entry is a conflict. The cost of a
booking (one flight each) is::

    fare A + fare B + GAP_PER_HOUR * hours between the arrivals
                    + CONFLICT_COST * flights that conflict

The optimum is the cheapest booking over every pair of flights (eight
flights each: 64 pairs, searched exhaustively); ties go to the pair whose
flight numbers sort first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

AIRPORT_MINUTES = 60
GAP_PER_HOUR = 40.0
CONFLICT_COST = 300.0


@dataclass(frozen=True)
class Flight:
    number: str
    depart: int
    arrive: int
    price: float


@dataclass(frozen=True)
class Event:
    start: int
    end: int
    title: str


@dataclass(frozen=True)
class Traveller:
    name: str
    origin: str
    flights: tuple[Flight, ...]
    calendar: tuple[Event, ...]

    def flight(self, number: str) -> Flight | None:
        want = number.strip().upper()
        return next((f for f in self.flights if f.number == want), None)

    def conflicts(self, flight: Flight) -> list[Event]:
        busy_from = flight.depart - AIRPORT_MINUTES
        return [e for e in self.calendar if e.start < flight.arrive and busy_from < e.end]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "origin": self.origin,
            "flights": [[f.number, f.depart, f.arrive, f.price] for f in self.flights],
            "calendar": [[e.start, e.end, e.title] for e in self.calendar],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Traveller:
        return cls(
            name=str(d["name"]),
            origin=str(d["origin"]),
            flights=tuple(Flight(str(n), int(a), int(b), float(p)) for n, a, b, p in d["flights"]),
            calendar=tuple(Event(int(a), int(b), str(t)) for a, b, t in d["calendar"]),
        )


@dataclass(frozen=True)
class Cost:
    total: float
    fares: float
    gap_minutes: int
    conflicts: int


def cost(a: Traveller, fa: Flight, b: Traveller, fb: Flight) -> Cost:
    gap = abs(fa.arrive - fb.arrive)
    conflicts = int(bool(a.conflicts(fa))) + int(bool(b.conflicts(fb)))
    fares = fa.price + fb.price
    total = fares + GAP_PER_HOUR * gap / 60 + CONFLICT_COST * conflicts
    return Cost(round(total, 2), fares, gap, conflicts)


def solve(a: Traveller, b: Traveller) -> tuple[tuple[str, str], float]:
    """The cheapest booking: ((A's flight, B's flight), its cost)."""
    best: tuple[float, str, str] | None = None
    for fa in a.flights:
        for fb in b.flights:
            key = (cost(a, fa, b, fb).total, fa.number, fb.number)
            if best is None or key < best:
                best = key
    assert best is not None, "a traveller without flights"
    return (best[1], best[2]), best[0]


def ranked(a: Traveller, b: Traveller, pairs: Sequence[tuple[Flight, Flight]]) -> list[Any]:
    return sorted(pairs, key=lambda p: (cost(a, p[0], b, p[1]).total, p[0].number, p[1].number))
