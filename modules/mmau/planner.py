"""Stage 1: the planner writes a strategy for the problem, without solving it."""

from __future__ import annotations

from agentbus import Observation, Plan, on
from modules.mmau.prompt import build
from modules.praf.parsing import parse_steps
from modules.praf.viewer import ViewActor

INSTRUCTIONS = """\
You write the plan another model will follow to solve the problem. Name the
method that fits, then give a short numbered list of the steps to carry out,
in order. Describe how to get the answer, not the answer: do not compute the
result and do not state a final value."""

REQUEST = "Write the plan as a numbered list of steps."


class PlannerActor(ViewActor):
    """Writes one plan from the instruction and the first observation."""

    role = "planner"
    publishes = (Plan,)

    @on(Observation)
    async def observed(self, msg: Observation) -> Plan | None:
        if not self.first_observation(msg):
            return None
        messages = build(self.role, INSTRUCTIONS, self.view, ("planning",), [], REQUEST)
        text = (await self.llm.complete(messages)).text.strip()
        return Plan(text=text, steps=parse_steps(text))


__all__ = ["PlannerActor"]
