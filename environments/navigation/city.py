"""The city: a hotel and places with a category, opening hours, visit length and ticket.

Distances are straight lines, kept in whole tenths of a kilometre so that
sums are exact; a taxi takes :data:`MINUTES_PER_KM` minutes per kilometre
and charges :data:`FARE_PER_KM` dollars per kilometre. Times are minutes
after midnight.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

HOTEL = "Hotel"
MINUTES_PER_KM = 4
FARE_PER_KM = 1.0
DAY_START = 9 * 60


@dataclass(frozen=True)
class Place:
    name: str
    category: str
    x: float
    y: float
    opens: int
    closes: int
    visit: int
    ticket: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class City:
    hotel: tuple[float, float]
    places: tuple[Place, ...]

    def place(self, name: str) -> Place | None:
        want = name.strip().lower()
        return next((p for p in self.places if p.name.lower() == want), None)

    def position(self, name: str) -> tuple[float, float]:
        if name == HOTEL:
            return self.hotel
        p = self.place(name)
        if p is None:
            raise KeyError(name)
        return (p.x, p.y)

    def tenths(self, a: str, b: str) -> int:
        """The distance from ``a`` to ``b`` in tenths of a kilometre."""
        (x1, y1), (x2, y2) = self.position(a), self.position(b)
        return round(math.hypot(x1 - x2, y1 - y2) * 10)

    def to_json(self) -> dict[str, Any]:
        return {"hotel": list(self.hotel), "places": [p.to_json() for p in self.places]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> City:
        hx, hy = data["hotel"]
        places = tuple(
            Place(
                name=str(p["name"]),
                category=str(p["category"]),
                x=float(p["x"]),
                y=float(p["y"]),
                opens=int(p["opens"]),
                closes=int(p["closes"]),
                visit=int(p["visit"]),
                ticket=float(p["ticket"]),
            )
            for p in data["places"]
        )
        return cls((float(hx), float(hy)), places)


def travel_minutes(tenths: int) -> int:
    return round(tenths * MINUTES_PER_KM / 10)
