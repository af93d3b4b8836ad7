"""What the ticket expert knows about one prompt: what has been looked up, and the optimum."""

from __future__ import annotations

from dataclasses import dataclass

from agentbus import PastRound, Task, rounds_so_far
from agentbus import prompt_sections as sections
from environments.ticket.desk import Desk
from environments.ticket.tasks import desk_of
from environments.ticket.world import Traveller, cost, solve


@dataclass
class Situation:
    task: Task
    desk: Desk
    parts: dict[str, str]
    last: PastRound | None
    #: lookups done before the last round (what the last thought was about)
    seen_before_last: set[str]

    @property
    def optimum(self) -> tuple[str, str]:
        a, b = self.task.hidden["optimum"]
        return str(a), str(b)

    def lookups(self) -> list[str]:
        d = self.desk
        return [f"{v}[{t.name}]" for t in (d.a, d.b) for v in ("flights", "calendar")]

    def plan_skips_calendars(self) -> bool:
        plan = self.parts.get("Plan", "")
        return bool(plan) and "calendar[" not in plan.lower()

    def good(self, action: str | None, seen: set[str] | None = None) -> bool:
        """A lookup not done yet, or booking the optimum."""
        if action is None:
            return False
        seen = self.desk.seen if seen is None else seen
        verb, _, rest = action.partition("[")
        if verb in ("flights", "calendar"):
            who = self.desk.traveller(rest.rstrip("]"))
            return who is not None and f"{verb}[{who.name}]" not in seen
        if verb == "book":
            wanted = {n.upper() for n in self.optimum}
            return all(n in rest.upper() for n in wanted)
        return False

    def next_good(self, trust_plan: bool = True) -> str:
        """The correct next action; a plan without calendar lookups is trusted."""
        skip = trust_plan and self.plan_skips_calendars()
        for lookup in self.lookups():
            if lookup.startswith("calendar") and skip:
                continue
            if lookup not in self.desk.seen:
                return lookup
        if skip:
            a, b = self.desk.a, self.desk.b
            (fa, fb), _ = solve(_free(a), _free(b))  # best ignoring calendars
            return f"book[{fa}, {fb}]"
        return f"book[{', '.join(self.optimum)}]"

    def booking_cost(self, fa: str, fb: str) -> float:
        a, b = self.desk.a, self.desk.b
        x, y = a.flight(fa), b.flight(fb)
        return cost(a, x, b, y).total if x and y else float("inf")


def _free(t: Traveller) -> Traveller:
    return Traveller(t.name, t.origin, t.flights, ())


def understand(task: Task, user: str) -> Situation:
    parts = sections(user)
    desk = desk_of(task)
    past = rounds_so_far(parts)
    before: set[str] = set()
    for r in past:
        before = set(desk.seen)
        if r.executed and not desk.done:
            desk.act(r.action)
    return Situation(task, desk, parts, past[-1] if past else None, before)
