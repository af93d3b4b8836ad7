"""MIRROR's answer agent: the final answer from the trajectory, gated by its critic.

Below theta_a after its revisions, the attempt's whole trajectory goes to the
planner (long-term memory) for another attempt; on the last attempt, or with
its critic off, the answer is given as it is.
"""

from __future__ import annotations

from typing import ClassVar

import orjson

from agentbus import ActionProposed, on
from modules.mirror.base import MAX_ATTEMPTS, Gate, MirrorActor
from modules.mirror.messages import AnswerReview, AttemptDone, AttemptFailed, Critique

#: theta_a: an answer scoring below this is revised, then replanned
THETA_A = 8.0


class AnswerAgent(MirrorActor):
    role: ClassVar[str] = "reasoning"
    agent: ClassVar[str] = "MIRROR answer agent"
    instructions: ClassVar[str] = (
        "Write the final answer to the user's query from the results of the calls, stating "
        "every value asked for exactly as the functions returned it."
    )
    publishes = (ActionProposed,)

    @on(AttemptDone)
    async def synthesise(self, msg: AttemptDone) -> ActionProposed | AttemptFailed:
        items = [("Observation", self.observation), ("Plan", msg.plan), ("History", msg.history)]
        draft = await self.ask(items, "Write the final answer.")

        async def revise(old: str, critique: Critique) -> str:
            return await self.ask(
                [*items, ("Draft answer", old), ("Critique", critique.text)],
                "Write a better final answer that answers the critique.",
            )

        context = f"Plan:\n{msg.plan}\n\nHistory:\n{msg.history}"
        answer, passed = await Gate(self, THETA_A).run(
            draft, lambda d: AnswerReview(draft=d, context=context), revise
        )
        if not passed and msg.attempt < MAX_ATTEMPTS:
            return AttemptFailed(
                attempt=msg.attempt,
                trajectory=f"Plan:\n{msg.plan}\n\n{msg.history}\n\nAnswer: {answer}",
                reason="the answer scored below the threshold",
            )
        call = {"name": "finish", "arguments": {"answer": answer}}
        return ActionProposed(text=orjson.dumps(call).decode(), round=0)
