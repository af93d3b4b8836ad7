"""End to end: the PRAF modules, unchanged, play robot tasks against the in-process simulator."""

from __future__ import annotations

from praf_harness import run_praf, sim_transport, strong_and_weak

from agentbus.core.environment import Task, TaskSource
from agentbus.core.outcome import Outcome
from agentbus.sim.transport import SimTransport
from environments.robot.env import RobotEnvironment
from environments.robot.expert import RobotExpert
from modules.praf import SLOTS


def transport_for(tasks: list[Task]) -> SimTransport:
    return sim_transport("robot", RobotExpert(), tasks)


async def run_all(
    tasks: list[Task], models: dict[str, str], transport: SimTransport
) -> list[Outcome]:
    return await run_praf(tasks, RobotEnvironment, models, transport, trace=True)


async def test_praf_agent_plays_robot_tasks_end_to_end() -> None:
    tasks = RobotEnvironment.setup(TaskSource(count=24, seed=2)).tasks
    transport = transport_for(tasks)
    strong, weak = await strong_and_weak(tasks, RobotEnvironment, transport)
    for o in strong + weak:
        assert o.details["kind"] in {"sweep", "cabinet", "sandwich", "sort"}
    mean_strong = sum(o.reward for o in strong) / len(strong)
    mean_weak = sum(o.reward for o in weak) / len(weak)
    assert mean_strong > 0.7
    assert mean_strong > mean_weak + 0.2
    # reflections happen on rejected rounds and reach the reasoning module
    trace = [m for o in weak for m in (o.trace or [])]
    assert any(m.get("type") == "Reflection" for m in trace)


async def test_reasoning_matters_more_than_action_on_robots() -> None:
    """Per CapaBench, reasoning is the MVP of robot cooperation: a strong reasoner alone
    lifts a weak agent more than a strong actor alone (the actor can repair rule breaks,
    not a misguided round)."""
    tasks = RobotEnvironment.setup(TaskSource(count=24, seed=4)).tasks
    transport = transport_for(tasks)
    weak = dict.fromkeys(SLOTS, "weak")

    async def mean(models: dict[str, str]) -> float:
        outcomes = await run_all(tasks, models, transport)
        return sum(o.reward for o in outcomes) / len(outcomes)

    base = await mean(weak)
    reasoning = await mean({**weak, "reasoning": "strong"})
    action = await mean({**weak, "action": "strong"})
    assert reasoning > base + 0.15
    assert reasoning > action + 0.1
