"""Stage 2: the solver solves the task with the environment's tools, following the plan.

Each round it reads the task, the plan and what happened so far, and answers
with the next step in a sentence and that step as one action block. It starts
on the plan; when the planner slot is off (``--vary planner=off:on``) it
starts on the first observation instead, so the game can also ask what
having a planner at all is worth.
"""

from __future__ import annotations

from agentbus import (
    ActionProposed,
    Feedback,
    Observation,
    Plan,
    Thought,
    on,
)
from modules.mmau.prompt import build
from modules.praf.parsing import parse_action
from modules.praf.viewer import ViewActor

INSTRUCTIONS = """\
You solve the problem in rounds, one tool call per round, following the plan
you are given. Each round, look at the plan and at what the earlier rounds
returned, say in one or two sentences what the next step is, then write that
step as exactly one action in the environment's syntax, in a single fenced
block:
```action
<the action>
```
When the answer is known, submit it with the answer action."""

REQUEST = "What is the next step? State it briefly, then give it as one ```action``` block."

#: how much of an unparseable answer is kept in the invalid action's text
_KEEP = 300


class SolverActor(ViewActor):
    """Answers the plan and every feedback with the next action (invalid when unparseable)."""

    role = "solver"
    publishes = (ActionProposed,)

    @on(Observation)
    async def observed(self, msg: Observation) -> ActionProposed | None:
        if self.first_observation(msg) and self.slot_off("planner"):
            return await self.solve()  # no planner in this episode: go without a plan
        return None

    @on(Plan)
    async def planned(self, msg: Plan) -> ActionProposed | None:
        self.view.set_plan(msg)
        return await self.solve()

    @on(Feedback)
    async def answered(self, msg: Feedback) -> ActionProposed | None:
        self.view.feedback(msg)
        if msg.done:
            return None
        return await self.solve()

    async def solve(self) -> ActionProposed | None:
        if self.view.done:
            return None
        number = self.view.next_round
        messages = build(
            self.role,
            INSTRUCTIONS,
            self.view,
            ("reasoning", "action"),
            [("Plan", self.view.plan), ("History", self.view.history())],
            REQUEST,
        )
        answer = (await self.llm.complete(messages)).text.strip()
        parsed = parse_action(answer, fmt=self.view.action_format)
        thought = answer.split("```", 1)[0].strip() or answer[:_KEEP]
        self.view.think(Thought(text=thought, round=number))
        if parsed.text is not None:
            action = ActionProposed(text=parsed.text, round=number)
        else:
            action = ActionProposed(
                text=answer[:_KEEP], round=number, valid=False, parse_error=parsed.error
            )
        self.view.act(action)
        return action


__all__ = ["SolverActor"]
