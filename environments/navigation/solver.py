"""The exact optimum: the shortest route that meets every requirement.

Depth-first search over ordered visits with pruning that can never cut off
a better route: distance, time and spending only grow along a route, and a
visit that overruns closing time cannot be repaired by later visits. Ties go
to fewer stops, then to the alphabetically first route, so the optimum is
unique and reproducible. Generated cities have eight places; the search
visits a few thousand partial routes.
"""

from __future__ import annotations

from collections.abc import Sequence

from environments.navigation.city import DAY_START, FARE_PER_KM, HOTEL, City, travel_minutes
from environments.navigation.constraints import Constraint
from environments.navigation.evaluation import Evaluation


def solve(city: City, constraints: Sequence[Constraint]) -> tuple[tuple[str, ...], int] | None:
    """(stops, distance in tenths of a km) of the optimum, or None when nothing is feasible."""
    banned = {c.value for c in constraints if c.kind == "avoid"}
    banned_cats = {c.value for c in constraints if c.kind == "avoid_category"}
    budget = min((float(c.value) for c in constraints if c.kind == "budget"), default=None)
    back_by = min((int(c.value) for c in constraints if c.kind == "back_by"), default=None)
    candidates = [p for p in city.places if p.name not in banned and p.category not in banned_cats]
    best: list[tuple[int, int, tuple[str, ...]]] = []

    def consider(stops: tuple[str, ...], tenths: int, t: int, tickets: float, here: str) -> None:
        leg = city.tenths(here, HOTEL)
        total = tenths + leg
        ev = Evaluation(
            stops=stops,
            tenths=total,
            cost=round(tickets + FARE_PER_KM * total / 10, 2),
            back=t + travel_minutes(leg),
            categories=frozenset(city.place(s).category for s in stops),  # type: ignore[union-attr]
        )
        if all(c.holds(ev) for c in constraints):
            key = (total, len(stops), stops)
            if not best or key < best[0]:
                best[:] = [key]

    def dfs(stops: tuple[str, ...], tenths: int, t: int, tickets: float, here: str) -> None:
        consider(stops, tenths, t, tickets, here)
        for p in candidates:
            if p.name in stops:
                continue
            d = tenths + city.tenths(here, p.name)
            if best and d > best[0][0]:
                continue
            start = max(t + travel_minutes(d - tenths), p.opens)
            end = start + p.visit
            if end > p.closes or (back_by is not None and end > back_by):
                continue
            spent = tickets + p.ticket
            if budget is not None and spent + FARE_PER_KM * d / 10 > budget + 1e-9:
                continue
            dfs((*stops, p.name), d, end, spent, p.name)

    dfs((), 0, DAY_START, 0.0, HOTEL)
    if not best:
        return None
    total, _, stops = best[0]
    return stops, total
