"""Action: turns the round's thought into one action in the environment's syntax."""

from __future__ import annotations

from agentbus import ActionProposed, Feedback, Plan, Thought, on
from modules.praf.base import PrafModule
from modules.praf.parsing import parse_action
from modules.praf.view import EpisodeView
from modules.praf.viewer import follows

INSTRUCTIONS = """\
Carry out the current thought as exactly one action the environment accepts.
Use the action syntax given below to the letter; do not explain, do not add a
second action. Answer with a single fenced block:
```action
<the action>
```"""

REQUEST = "Write the action for the current thought as one ```action``` block."

#: how much of an unparseable answer is kept in the invalid action's text
_KEEP = 300


class ActionActor(PrafModule):
    """Answers each Thought with an ActionProposed (invalid when unparseable)."""

    role = "action"
    instructions = INSTRUCTIONS
    publishes = (ActionProposed,)

    planned = follows(Plan, EpisodeView.set_plan)

    @on(Thought)
    async def thought(self, msg: Thought) -> ActionProposed | None:
        self.view.think(msg)
        if self.view.done:
            return None
        answer = await self.ask(
            [
                ("Plan", self.view.plan),
                ("History", self.history()),
                ("Current thought", msg.text),
            ],
            REQUEST,
        )
        parsed = parse_action(
            answer,
            cut=self.finish_reason == "length",
            prompt=self.prompt,
            fmt=self.view.action_format,
        )
        if parsed.text is not None:
            action = ActionProposed(text=parsed.text, round=msg.round)
        else:
            action = ActionProposed(
                text=answer[:_KEEP], round=msg.round, valid=False, parse_error=parsed.error
            )
        self.view.act(action)
        return action

    answered = follows(Feedback, EpisodeView.feedback)


__all__ = ["ActionActor"]
