"""End to end: the PRAF modules, unchanged, play git puzzles against the in-process simulator."""

from __future__ import annotations

from environments.git.env import GitEnvironment
from environments.git.expert import GitExpert
from modules.praf import SLOTS
from tests.helpers.praf_harness import PrafWorld, praf_world, strong_and_weak


def puzzles(seed: int) -> PrafWorld:
    """30 generated git puzzles and a simulator whose expert knows them."""
    return praf_world("git", GitEnvironment, GitExpert(), count=30, seed=seed)


async def test_praf_agent_plays_git_puzzles_end_to_end() -> None:
    strong, weak = await strong_and_weak(puzzles(21))
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
    world = puzzles(22)
    weak = await world.run(dict.fromkeys(SLOTS, "weak"))
    models = dict.fromkeys(SLOTS, "weak") | {"reasoning": "strong"}
    helped = await world.run(models)
    gain = sum(o.reward for o in helped) - sum(o.reward for o in weak)
    assert gain / len(world.tasks) > 0.2
