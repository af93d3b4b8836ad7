"""End to end: the PRAF modules, unchanged, play git puzzles against the in-process simulator."""

from __future__ import annotations

from praf_harness import run_praf, sim_transport, strong_and_weak

from agentbus.core.environment import Task, TaskSource
from agentbus.core.outcome import Outcome
from agentbus.sim.transport import SimTransport
from environments.git.env import GitEnvironment
from environments.git.expert import GitExpert
from modules.praf import SLOTS


def transport_for(tasks: list[Task]) -> SimTransport:
    return sim_transport("git", GitExpert(), tasks)


async def run_all(
    tasks: list[Task], models: dict[str, str], transport: SimTransport
) -> list[Outcome]:
    return await run_praf(tasks, GitEnvironment, models, transport, trace=True)


async def test_praf_agent_plays_git_puzzles_end_to_end() -> None:
    tasks = GitEnvironment.setup(TaskSource(count=30, seed=21)).tasks
    transport = transport_for(tasks)
    strong, weak = await strong_and_weak(tasks, GitEnvironment, transport)
    for o in strong + weak:
        assert o.details["puzzle"].startswith("gen-21-")
    mean_strong = sum(o.reward for o in strong) / len(strong)
    mean_weak = sum(o.reward for o in weak) / len(weak)
    assert mean_strong > 0.8 and mean_weak < mean_strong - 0.25
    # the strong agent mostly follows the recorded path: few wasted rounds
    solved = [o for o in strong if o.success]
    extra = [o.steps - o.details["solution_length"] for o in solved]
    assert sum(extra) / len(extra) < 1.5


async def test_strong_reasoning_helps_a_weak_agent() -> None:
    tasks = GitEnvironment.setup(TaskSource(count=30, seed=22)).tasks
    transport = transport_for(tasks)
    weak = await run_all(tasks, dict.fromkeys(SLOTS, "weak"), transport)
    models = dict.fromkeys(SLOTS, "weak") | {"reasoning": "strong"}
    helped = await run_all(tasks, models, transport)
    gain = sum(o.reward for o in helped) - sum(o.reward for o in weak)
    assert gain / len(tasks) > 0.2
