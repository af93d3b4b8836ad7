"""The city as the agent sees it: places, opening hours, tickets and distances."""

from __future__ import annotations

from environments.daytime import clock
from environments.navigation.city import FARE_PER_KM, HOTEL, MINUTES_PER_KM, City


def city_text(city: City) -> str:
    names = [HOTEL, *(p.name for p in city.places)]
    lines = [
        f"The city: the hotel and {len(city.places)} places. A taxi takes {MINUTES_PER_KM} "
        f"minutes and costs ${FARE_PER_KM:.0f} per km; distances below are in km.",
        "Places (category, open-close, visit length, ticket):",
    ]
    for i, p in enumerate(city.places, 1):
        lines.append(
            f"{i}. {p.name} ({p.category}, {clock(p.opens)}-{clock(p.closes)}, "
            f"{p.visit} min, ${p.ticket:.0f})"
        )
    lines.append("Distances (row to column; 0 = Hotel, numbers as above):")
    lines.append("     " + " ".join(f"{j:>5}" for j in range(len(names))))
    for i, a in enumerate(names):
        row = " ".join(f"{city.tenths(a, b) / 10:>5.1f}" for b in names)
        lines.append(f"{i:>3}  {row}")
    return "\n".join(lines)
