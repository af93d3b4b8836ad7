"""The booking desk: lookups and one booking, shared by environment and expert.

Actions: ``flights[Name]`` and ``calendar[Name]`` show a traveller's options
and busy times; ``book[FLIGHT, FLIGHT]`` books one flight per traveller and
ends the task. Anything else is answered with what went wrong and what is
possible, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from environments.daytime import clock
from environments.ticket.world import AIRPORT_MINUTES, Cost, Traveller, cost

_NUMBER = re.compile(r"\b[A-Za-z]{2}\d{3}\b")
_ACTION = re.compile(r"^\s*(flights|calendar|book)\s*\[(.*)\]\s*$", re.IGNORECASE | re.DOTALL)


@dataclass
class StepResult:
    text: str
    valid: bool
    done: bool
    repeated: bool = False


@dataclass
class Desk:
    a: Traveller
    b: Traveller
    destination: str
    seen: set[str] = field(default_factory=set)
    booked: tuple[str, str] | None = None
    booking_cost: Cost | None = None
    done: bool = False

    def traveller(self, name: str) -> Traveller | None:
        want = name.strip().lower()
        return next((t for t in (self.a, self.b) if t.name.lower() == want), None)

    def act(self, text: str) -> StepResult:
        if self.done:
            return StepResult("The booking is already made.", False, True)
        m = _ACTION.match(text.strip().strip("`").strip())
        if m is None:
            return self._invalid(
                f"{text.strip()[:80]!r} is not an action here; write flights[Name], "
                "calendar[Name] or book[FLIGHT, FLIGHT]"
            )
        verb, arg = m.group(1).lower(), m.group(2).strip()
        if verb == "book":
            return self._book(arg)
        who = self.traveller(arg)
        if who is None:
            return self._invalid(
                f"no traveller called {arg!r}; the travellers are {self.a.name} and {self.b.name}"
            )
        key = f"{verb}[{who.name}]"
        repeated = key in self.seen
        self.seen.add(key)
        body = self._flights(who) if verb == "flights" else self._calendar(who)
        note = " (shown before)" if repeated else ""
        return StepResult(f"{body}{note}", True, False, repeated)

    def _invalid(self, why: str) -> StepResult:
        return StepResult(f"Invalid action: {why}.", False, False)

    def _flights(self, t: Traveller) -> str:
        lines = [f"Flights for {t.name}, {t.origin} to {self.destination} (local times):"]
        for f in t.flights:
            lines.append(
                f"{f.number}: departs {clock(f.depart)}, arrives {clock(f.arrive)}, ${f.price:.0f}"
            )
        return "\n".join(lines)

    def _calendar(self, t: Traveller) -> str:
        lines = [
            f"Calendar of {t.name} on the travel day (busy; they need to leave for the "
            f"airport {AIRPORT_MINUTES} minutes before take-off):"
        ]
        lines += [f"{clock(e.start)}-{clock(e.end)} {e.title}" for e in t.calendar]
        return "\n".join(lines)

    def _book(self, arg: str) -> StepResult:
        numbers = [n.upper() for n in _NUMBER.findall(arg)]
        if len(numbers) != 2:
            return self._invalid("book[...] needs exactly two flight numbers, one per traveller")
        fa = next((self.a.flight(n) for n in numbers if self.a.flight(n)), None)
        fb = next((self.b.flight(n) for n in numbers if self.b.flight(n)), None)
        if fa is None or fb is None:
            return self._invalid(
                f"{' and '.join(numbers)} are not one flight of {self.a.name} and one of "
                f"{self.b.name}; look the flights up with flights[Name]"
            )
        self.booked = (fa.number, fb.number)
        c = cost(self.a, fa, self.b, fb)
        self.booking_cost = c
        self.done = True
        return StepResult(
            f"Booked {fa.number} for {self.a.name} (arrives {clock(fa.arrive)}) and "
            f"{fb.number} for {self.b.name} (arrives {clock(fb.arrive)}): fares "
            f"${c.fares:.0f}, arrivals {c.gap_minutes} minutes apart, {c.conflicts} calendar "
            "conflict(s). The booking is done.",
            True,
            True,
        )
