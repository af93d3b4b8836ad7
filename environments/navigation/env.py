"""The navigation environment adapter: routes proposed, the traveller answers.

``reset`` shows the city and the requirements; each ``step`` takes one
``propose[...]`` and answers with the timeline, which requirements hold and,
by the task's seeded schedule, a new requirement. The episode ends when the
traveller accepts a route; it is scored against the exact optimum for the
requirements in force at the end (see :mod:`~environments.navigation.scoring`).
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
from environments.navigation.guide import navigation_guide
from environments.navigation.scoring import RouteScore, score_route
from environments.navigation.tasks import MAX_ROUNDS, optima_of, tasks_from, trip_of
from environments.navigation.trip import Trip
from environments.navigation.views import city_text


class NavigationEnvironment(Environment):
    """City itineraries under a budget, opening hours, a return time and changing wishes."""

    name: ClassVar[str] = "navigation"
    default_max_steps: ClassVar[int] = MAX_ROUNDS
    action_format = "command"

    def __init__(self) -> None:
        self.trip: Trip | None = None
        self.optima: list[tuple[tuple[str, ...], int]] = []

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        return EnvSetup(tasks=tasks_from(source), factory=cls)

    def guide(self, task: Task) -> dict[str, str]:
        return navigation_guide()

    async def reset(self, task: Task) -> Observation:
        self.trip = trip_of(task)
        self.optima = optima_of(task)
        text = f"{city_text(self.trip.city)}\n\nRequirements now:\n{self.trip.requirements_text()}"
        return Observation(text=text, data={"requirements": len(self.trip.active)})

    def _trip(self) -> Trip:
        if self.trip is None:
            raise RuntimeError("navigation environment: step() before reset()")
        return self.trip

    def _score(self) -> RouteScore:
        t = self._trip()
        return score_route(t.city, t.last, t.active, self.optima[t.arrived][1])

    async def step(self, action: ActionProposed) -> Feedback:
        t = self._trip()
        result = t.act(action.text)
        score = self._score()
        return Feedback(
            text=result.text,
            done=result.done,
            success=score.success if result.done else None,
            reward=score.reward,
            valid=result.valid,
            needs_reflection=not result.done and (not result.valid or bool(result.broken)),
            data={"rounds": t.rounds, "requirements": len(t.active), "arrived": t.arrived},
        )

    async def score(self) -> Score:
        t = self._trip()
        s = self._score()
        return Score(
            reward=s.reward,
            success=s.success,
            details={
                "accepted": t.accepted,
                "rounds": t.rounds,
                "arrived": t.arrived,
                "met": f"{s.met}/{s.requirements}",
                "km": s.tenths / 10,
                "optimum_km": s.optimum / 10,
            },
        )
