"""Intra-reflection: each agent's self-assessment, as an actor in its own slot.

A critic scores one draft against its agent's criteria (1-10, MIRROR's
scale) and says what to change; the agent revises below its threshold. In
MIRROR the agent assesses itself; here the assessment is a separate call by
the critic's slot, so it can be switched off (no call at all) and its model
chosen like any slot's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

from agentbus import on
from modules.mirror.base import MirrorActor, parse_score
from modules.mirror.messages import AnswerReview, CallReview, Critique, PlanReview, Review


def judges(review: type[Review]) -> Callable[[Critic, Review], Awaitable[Critique]]:
    """The handler of a critic: it judges every ``review`` message it receives."""

    async def handler(self: Critic, msg: Review) -> Critique:
        return await self.judge(msg)

    return on(review)(handler)


class Critic(MirrorActor):
    role: ClassVar[str] = "reflection"
    of: ClassVar[str] = ""
    criteria: ClassVar[str] = ""
    under_review: ClassVar[str] = "Output under review"

    async def judge(self, msg: Review) -> Critique:
        text = await self.ask(
            [("Context", msg.context), (self.under_review, msg.draft), ("Criteria", self.criteria)],
            "Score the output from 1 (poor) to 10 (excellent) on the first line as "
            "'Score: N/10', then say what is wrong and how to fix it.",
        )
        return Critique(score=parse_score(text), text=text)


class PlanCritic(Critic):
    agent = "MIRROR intra-reflection of the planner agent"
    of = "plan"
    under_review = "Draft plan"
    criteria = (
        "Complete (every fact the query asks for is obtained), efficient (no needless calls), "
        "coherent (each step names one function and its arguments; an id returned by one "
        "step feeds the next), and it uses what earlier attempts taught."
    )

    review = judges(PlanReview)


class CallCritic(Critic):
    agent = "MIRROR intra-reflection of the tool agent"
    of = "call"
    under_review = "Draft call"
    criteria = (
        "The function fits the current subtask, the arguments are valid and take their values "
        "from the query and earlier results, and the call avoids what already failed."
    )

    review = judges(CallReview)


class AnswerCritic(Critic):
    agent = "MIRROR intra-reflection of the answer agent"
    of = "answer"
    under_review = "Draft answer"
    criteria = (
        "The answer states every value the query asks for, exactly as the calls returned "
        "them, integrates the whole trajectory, and is clear."
    )

    review = judges(AnswerReview)
