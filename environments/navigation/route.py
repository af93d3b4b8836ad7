"""Walking a route through the day: timeline, distance, cost and hour problems.

The day starts at the hotel at 09:00. Arriving before a place opens means
waiting; a visit must end by closing time. The route ends back at the hotel.
"""

from __future__ import annotations

from collections.abc import Sequence

from environments.daytime import clock
from environments.navigation.city import DAY_START, FARE_PER_KM, HOTEL, City, travel_minutes
from environments.navigation.constraints import Constraint
from environments.navigation.evaluation import Evaluation


def evaluate(city: City, stops: Sequence[str]) -> Evaluation:
    """Walk ``stops`` (place names, known to the city) from the hotel and back."""
    ev = Evaluation(tuple(stops))
    t, here, tickets = DAY_START, HOTEL, 0.0
    cats = set()
    for name in stops:
        place = city.place(name)
        if place is None:
            raise KeyError(name)
        d = city.tenths(here, place.name)
        ev.tenths += d
        t += travel_minutes(d)
        arrive = t
        t = max(t, place.opens)
        end = t + place.visit
        wait = f", wait until {clock(place.opens)}" if arrive < place.opens else ""
        ev.timeline.append(
            f"{clock(arrive)} arrive at {place.name} ({d / 10:.1f} km){wait}; "
            f"visit {clock(t)}-{clock(end)}"
        )
        if end > place.closes:
            ev.hour_problems.append(
                f"{place.name} closes at {clock(place.closes)} but the visit would end at "
                f"{clock(end)}"
            )
        t = end
        here = place.name
        tickets += place.ticket
        cats.add(place.category)
    d = city.tenths(here, HOTEL)
    ev.tenths += d
    t += travel_minutes(d)
    ev.back = t
    ev.timeline.append(f"{clock(t)} back at the hotel ({d / 10:.1f} km)")
    ev.cost = round(tickets + FARE_PER_KM * ev.tenths / 10, 2)
    ev.categories = frozenset(cats)
    return ev


def violations(ev: Evaluation, constraints: Sequence[Constraint]) -> list[Constraint]:
    return [c for c in constraints if not c.holds(ev)]


__all__ = ["evaluate", "violations"]
