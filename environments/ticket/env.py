"""The ticket environment adapter: lookups and one booking, scored against the optimum.

The reward of a booking is ``optimum cost / booking cost`` (1 for a booking
as cheap as the optimum, which is success); no booking within the step limit
scores 0. Invalid and repeated actions ask for a reflection.
"""

from __future__ import annotations

from typing import ClassVar

from agentbus import (
    ActionProposed,
    Environment,
    EnvSetup,
    Feedback,
    Observation,
    Score,
    Task,
    TaskSource,
)
from environments.ticket.desk import Desk
from environments.ticket.guide import ticket_guide
from environments.ticket.tasks import MAX_STEPS, desk_of, tasks_from


class TicketEnvironment(Environment):
    """The cheapest flight combination for two travellers, given calendars and arrivals."""

    name: ClassVar[str] = "ticket"
    default_max_steps: ClassVar[int] = MAX_STEPS
    action_format = "command"

    def __init__(self) -> None:
        self.desk: Desk | None = None
        self.optimum = 0.0

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        return EnvSetup(tasks=tasks_from(source), factory=cls)

    def guide(self, task: Task) -> dict[str, str]:
        return ticket_guide()

    async def reset(self, task: Task) -> Observation:
        self.desk = desk_of(task)
        self.optimum = float(task.hidden["optimum_cost"])
        d = self.desk
        text = (
            f"Travellers: {d.a.name} (from {d.a.origin}) and {d.b.name} (from {d.b.origin}), "
            f"meeting in {d.destination}. Nothing is looked up yet: use flights[Name] and "
            "calendar[Name], then book[FLIGHT, FLIGHT]."
        )
        return Observation(text=text)

    def _desk(self) -> Desk:
        if self.desk is None:
            raise RuntimeError("ticket environment: step() before reset()")
        return self.desk

    def reward(self) -> float:
        c = self._desk().booking_cost
        if c is None or c.total <= 0:
            return 0.0
        return round(min(1.0, self.optimum / c.total), 6)

    async def step(self, action: ActionProposed) -> Feedback:
        d = self._desk()
        result = d.act(action.text)
        reward = self.reward()
        return Feedback(
            text=result.text,
            done=result.done,
            success=(reward >= 1.0 - 1e-9) if result.done else None,
            reward=reward,
            valid=result.valid,
            needs_reflection=not result.done and (not result.valid or result.repeated),
            data={"seen": sorted(d.seen)},
        )

    async def score(self) -> Score:
        d = self._desk()
        reward = self.reward()
        c = d.booking_cost
        return Score(
            reward=reward,
            success=reward >= 1.0 - 1e-9,
            details={
                "booked": list(d.booked) if d.booked else None,
                "cost": c.total if c else None,
                "optimum_cost": self.optimum,
                "conflicts": c.conflicts if c else None,
                "gap_minutes": c.gap_minutes if c else None,
            },
        )
