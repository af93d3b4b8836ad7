"""PRAF's action module on the robot environment: a right round repeats the plan's lines.

The parser refuses a block that mostly copies the prompt's example lines; the
module must offer it only its system message (instructions and guide) for that,
not the plan and thought a right robot round repeats word for word.
"""

from __future__ import annotations

import anyio

from agentbus.core import registry
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.sim.expert import Verdict
from environments.robot.env import RobotEnvironment
from environments.robot.expert import RobotExpert
from environments.robot.tasks import generated_tasks
from modules.praf import AGENT, SLOTS
from tests.environments.math.test_math_expert import ExpertModel


async def test_a_perfect_agent_solves_robot_tasks_through_the_real_modules() -> None:
    tasks = generated_tasks(4, 5)
    expert = RobotExpert()
    expert.add_tasks(tasks)
    model = ExpertModel(expert, Verdict(correct=True))  # type: ignore[arg-type]
    outcomes = []

    async def one(i: int) -> None:
        actors = [
            ActorSpec(slot=s, factory=registry.get("modules", AGENT[s]), llm=model) for s in SLOTS
        ]
        spec = EpisodeSpec(f"r-{i}", tasks[i], RobotEnvironment, actors, trace=True)
        outcomes.append(await Episode(spec).run())

    async with anyio.create_task_group() as tg:
        for i in range(len(tasks)):
            tg.start_soon(one, i)
    assert len(outcomes) == len(tasks)
    assert all(o.success for o in outcomes), [o.reward for o in outcomes]
