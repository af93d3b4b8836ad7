"""MIRROR's planner agent: ordered subtasks, gated by its critic, informed by long-term memory."""

from __future__ import annotations

from typing import ClassVar

from agentbus import Message, on
from modules.mirror.base import MAX_ATTEMPTS, Gate, MirrorActor, numbered_steps
from modules.mirror.messages import (
    AttemptFailed,
    Critique,
    LtmRecall,
    LtmStore,
    PlanReady,
    PlanReview,
)

#: theta_p: a plan scoring below this is revised (MIRROR found 9 of 10 best for the planner)
THETA_P = 8.0


class Planner(MirrorActor):
    role: ClassVar[str] = "planning"
    agent: ClassVar[str] = "MIRROR planner agent"
    instructions: ClassVar[str] = (
        "Decompose the task into ordered subtasks, one function call each, numbered "
        "'1. ...', '2. ...', naming the function and its arguments."
    )
    publishes = (PlanReady,)

    def __init__(self) -> None:
        super().__init__()
        self.attempt = 0

    async def begin(self) -> Message | None:
        return await self.plan(1)

    async def plan(self, attempt: int) -> PlanReady:
        self.attempt = attempt
        memory = await self.recall(LtmRecall())
        items = [
            ("Observation", self.observation),
            ("Attempt", f"{attempt} of {MAX_ATTEMPTS}"),
            ("Long-term memory", "\n\n".join(memory)),
        ]
        draft = await self.ask(items, "Write the plan.")

        async def revise(old: str, critique: Critique) -> str:
            return await self.ask(
                [*items, ("Draft plan", old), ("Critique", critique.text)],
                "Write a better plan that answers the critique.",
            )

        context = f"Functions and state:\n{self.observation}\n\nPast attempts:\n" + "\n\n".join(
            memory
        )
        text, _ = await Gate(self, THETA_P).run(
            draft, lambda d: PlanReview(draft=d, context=context), revise
        )
        return PlanReady(attempt=attempt, text=text, subtasks=numbered_steps(text))

    @on(AttemptFailed)
    async def replan(self, msg: AttemptFailed) -> PlanReady | None:
        await self.note(
            LtmStore(text=f"Attempt {msg.attempt} failed ({msg.reason}):\n{msg.trajectory}")
        )
        if msg.attempt >= MAX_ATTEMPTS:
            return None
        return await self.plan(msg.attempt + 1)
