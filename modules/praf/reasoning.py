"""Reasoning: decides, each round, what the next step is and why."""

from __future__ import annotations

from agentbus import ActionProposed, Feedback, Observation, Plan, Reflection, Thought, on
from modules.praf.base import PrafModule
from modules.praf.view import EpisodeView
from modules.praf.viewer import follows

INSTRUCTIONS = """\
You work in rounds. Each round, look at the task, the plan and everything that
happened so far, then decide the single next step: which tool to use with what
input, or, when the work is finished, what the final answer is. Explain your
reasoning briefly and state the step precisely (exact numbers, expressions or
commands) so the action module can carry it out literally. When a reflection
on a failed attempt is given, take its advice into account."""

REQUEST = "What is the next step? Think it through, then state that one step clearly."


class ReasoningActor(PrafModule):
    """Starts round 1 on the plan, then every round on feedback or reflection."""

    role = "reasoning"
    instructions = INSTRUCTIONS
    publishes = (Thought,)

    async def think(self) -> Thought | None:
        if self.view.done:
            return None
        number = self.view.next_round
        text = await self.ask(
            [
                ("Plan", self.view.plan),
                ("History", self.history()),
                ("Latest reflection", self.view.reflection),
            ],
            REQUEST,
        )
        thought = Thought(text=text, round=number)
        self.view.think(thought)
        return thought

    @on(Observation)
    async def observed(self, msg: Observation) -> Thought | None:
        if self.first_observation(msg) and self.slot_off("planning"):
            return await self.think()  # no planning module in this episode (--vary)
        return None

    @on(Plan)
    async def planned(self, msg: Plan) -> Thought | None:
        self.view.set_plan(msg)
        return await self.think()

    acted = follows(ActionProposed, EpisodeView.act)

    @on(Feedback)
    async def answered(self, msg: Feedback) -> Thought | None:
        self.view.feedback(msg)
        if msg.done:
            return None
        # Wait for the critique when someone will write one; otherwise go on.
        if msg.needs_reflection and self._critic_present():
            return None
        return await self.think()

    def _critic_present(self) -> bool:
        """Whether a reflection module will answer a failed step in this episode.

        This module handles Reflection itself, so the bus cannot tell. An
        evaluation's episode names every slot in its ``assignment`` metadata: the
        reflection slot must be there and not switched off (``--vary``).
        """
        assignment = self.ctx.metadata.get("assignment")
        if assignment is None:  # an episode built by hand: assume the full agent
            return self.ctx.bus.handles(Reflection)
        return "reflection" in assignment and not self.slot_off("reflection")

    @on(Reflection)
    async def reflected(self, msg: Reflection) -> Thought | None:
        self.view.reflect(msg)
        return await self.think()


__all__ = ["ReasoningActor"]
