"""Reflection: after a step the environment marks as failed, says what went wrong."""

from __future__ import annotations

from agentbus import ActionProposed, Feedback, Plan, Reflection, Thought, on
from modules.praf.base import PrafModule
from modules.praf.view import EpisodeView
from modules.praf.viewer import follows

INSTRUCTIONS = """\
The last step failed. Find the cause: a wrong method, a wrong intermediate
result, a wrong tool input, or a misread task. Say briefly what the mistake
was and what should be done differently in the next round, concretely enough
that the reasoning module can act on it. Do not repeat the failed step."""

REQUEST = "Reflect on the failed step: what went wrong, and what should be done next?"


class ReflectionActor(PrafModule):
    """Writes a Reflection for every feedback that asks for one."""

    role = "reflection"
    instructions = INSTRUCTIONS
    publishes = (Reflection,)

    planned = follows(Plan, EpisodeView.set_plan)
    thought = follows(Thought, EpisodeView.think)
    acted = follows(ActionProposed, EpisodeView.act)

    @on(Feedback)
    async def answered(self, msg: Feedback) -> Reflection | None:
        last = self.view.feedback(msg)
        if msg.done or not msg.needs_reflection:
            return None
        text = await self.ask(
            [
                ("Plan", self.view.plan),
                ("History", self.history()),
                ("Last step", last.render()),
            ],
            REQUEST,
        )
        self.view.reflect(Reflection(text=text, round=msg.round))
        return Reflection(text=text, round=msg.round)


__all__ = ["ReflectionActor"]
