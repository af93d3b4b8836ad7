"""A reflection module written from scratch: one sentence of critique per failed step."""

from __future__ import annotations

from agentbus import Actor, Feedback, Reflection, TaskStarted, on


class OneLineCritic(Actor):
    """Fills the reflection slot: what failed, and the next thing to try."""

    publishes = (Reflection,)

    def __init__(self) -> None:
        self.task = ""

    @on(TaskStarted)
    async def start(self, msg: TaskStarted) -> None:
        self.task = msg.instruction

    @on(Feedback)
    async def critique(self, msg: Feedback) -> Reflection | None:
        if msg.done or not msg.needs_reflection:
            return None  # only failed steps need a critique
        answer = await self.llm.complete(
            [
                {
                    "role": "system",
                    "content": "You are the reflection module of an LLM agent. "
                    "In one sentence: what went wrong, and what to try next.",
                },
                {"role": "user", "content": f"## Task\n{self.task}\n\n## Last step\n{msg.text}"},
            ]
        )
        return Reflection(text=answer.text.strip(), round=msg.round)
