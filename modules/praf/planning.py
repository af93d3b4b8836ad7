"""Planning: one plan for the whole task, written before the first round."""

from __future__ import annotations

from agentbus import Observation, Plan, on
from modules.praf.base import PrafModule
from modules.praf.parsing import parse_steps

INSTRUCTIONS = """\
Before anything is done, lay out how the task should be solved. Name the
method or idea that fits the task, then break the work into a short numbered
list of concrete steps (at most six) that another module will carry out one at
a time with the tools the environment offers. Do not carry out the steps and
do not give a final answer yourself; only plan."""

REQUEST = "Write the plan as a numbered list of steps."


class PlanningActor(PrafModule):
    """Writes the plan once, from the instruction and the first observation."""

    role = "planning"
    instructions = INSTRUCTIONS
    publishes = (Plan,)

    @on(Observation)
    async def observed(self, msg: Observation) -> Plan | None:
        if not self.first_observation(msg) or self.view.plan:
            return None
        text = await self.ask([], REQUEST)
        self.view.plan = text
        return Plan(text=text, steps=parse_steps(text))


__all__ = ["PlanningActor"]
