"""The tally environment's adapter: one round, one number, right or wrong.

``setup`` makes the tasks, ``guide`` tells the four modules what the domain is
and what an action looks like, ``reset`` shows the numbers, ``step`` judges
the one answer and ends the episode, ``score`` gives the verdict and its
details. One round keeps the example's truth exact (see truth.py).
"""

from __future__ import annotations

from typing import ClassVar

from tally_tasks import ENV, tasks_from

from agentbus import (
    ActionProposed,
    Environment,
    EnvSetup,
    Feedback,
    Observation,
    Score,
    Task,
    TaskSource,
    action_fence,
    env_guide,
)


class TallyEnvironment(Environment):
    """Add up a list of numbers; the first answer is final."""

    name: ClassVar[str] = ENV
    default_max_steps: ClassVar[int] = 1

    def __init__(self) -> None:
        self.total = 0
        self.answer: int | None = None

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        return EnvSetup(tasks=tasks_from(source), factory=cls)

    def guide(self, task: Task) -> dict[str, str]:
        return env_guide(
            system="You add up short lists of whole numbers. The answer is one whole number.",
            planning="Say how you will add the numbers, naming each of them.",
            reasoning="Add the numbers and end with one line 'The total is N.'",
            action="Write the total alone, for example:\n" + action_fence("42"),
            reflection="Say which number was added wrongly or left out.",
        )

    async def reset(self, task: Task) -> Observation:
        self.total = int(task.hidden["total"])
        self.answer = None
        return Observation(text="Numbers: " + ", ".join(map(str, task.data["numbers"])))

    async def step(self, action: ActionProposed) -> Feedback:
        text = action.text.strip()
        self.answer = int(text) if text.lstrip("-").isdigit() else None
        right = self.answer == self.total
        return Feedback(
            text="Right." if right else f"{text!r} is not the total.",
            round=action.round,
            done=True,
            success=right,
            reward=1.0 if right else 0.0,
            valid=self.answer is not None,
        )

    async def score(self) -> Score:
        right = self.answer == self.total
        return Score(
            reward=1.0 if right else 0.0,
            success=right,
            details={"answer": self.answer, "total": self.total},
        )
