"""End to end: the PRAF modules, unchanged, play robot tasks against the in-process simulator."""

from __future__ import annotations

from environments.robot.env import RobotEnvironment
from environments.robot.expert import RobotExpert
from modules.praf import SLOTS
from tests.helpers.praf_harness import PrafWorld, praf_world, strong_and_weak


def robot_tasks(seed: int) -> PrafWorld:
    """24 generated robot tasks and a simulator whose expert knows them."""
    return praf_world("robot", RobotEnvironment, RobotExpert(), count=24, seed=seed)


async def test_praf_agent_plays_robot_tasks_end_to_end() -> None:
    strong, weak = await strong_and_weak(robot_tasks(2))
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
    world = robot_tasks(4)
    weak = dict.fromkeys(SLOTS, "weak")

    async def mean(models: dict[str, str]) -> float:
        outcomes = await world.run(models)
        return sum(o.reward for o in outcomes) / len(outcomes)

    base = await mean(weak)
    reasoning = await mean({**weak, "reasoning": "strong"})
    action = await mean({**weak, "action": "strong"})
    assert reasoning > base + 0.15
    assert reasoning > action + 0.1
