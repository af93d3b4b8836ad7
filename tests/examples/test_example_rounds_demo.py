"""The second worked environment (examples/rounds_demo: many rounds, with reflection) works.

The guess environment hides a number from 1 to 31; each round the agent
guesses it and is told higher or lower. Checked here: the environment on its
own (a bisecting agent always finds the number within the step limit, an
agent whose actions cannot be read never does, and an off-middle guess asks
for a reflection), the expert's replay and judgement of a prompt with
history, and a short evaluation on the simulator through the plugin entry
points, in which the reflection module runs.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from rich.console import Console

from agentbus import ActionProposed, Actor, Feedback, Observation, on
from agentbus.app.config import build_config
from agentbus.app.evaluate import evaluate
from agentbus.core.environment import TaskSource
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from tests.helpers.example_install import installed

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rounds_demo"


@pytest.fixture
def demo() -> Iterator[tuple[ModuleType, ModuleType]]:
    """The example's plugins registered (as pip install -e would) and its two modules."""
    with installed(EXAMPLE):
        yield importlib.import_module("guess_env"), importlib.import_module("guess_expert")


class Bisector(Actor):
    """Guesses the middle of what is still possible, reading the environment's answers."""

    def __init__(self) -> None:
        self.lo, self.hi, self.last = 1, 31, 0

    @on(Observation, Feedback)
    async def guess(self, msg: Observation | Feedback) -> ActionProposed:
        if isinstance(msg, Feedback):
            if "higher" in msg.text:
                self.lo = self.last + 1
            else:
                self.hi = self.last - 1
        self.last = (self.lo + self.hi) // 2
        return ActionProposed(text=f"guess[{self.last}]")


class Mumbler(Actor):
    """An agent that does nothing useful: its every action is unreadable."""

    @on(Observation, Feedback)
    async def say(self, msg: Observation | Feedback) -> ActionProposed:
        return ActionProposed(text="hmm")


async def test_bisection_always_wins_and_an_agent_that_does_nothing_never_does(
    demo: tuple[ModuleType, ModuleType],
) -> None:
    env, _ = demo
    tasks = env.tasks_from(TaskSource(count=20))
    for agent, won in ((Bisector, True), (Mumbler, False)):
        for task in tasks:
            spec = EpisodeSpec(task.id, task, env.GuessEnvironment, [ActorSpec("action", agent)])
            out = await Episode(spec).run()
            assert out.success is won and out.reward == (1.0 if won else 0.0), (agent, out)
            assert out.steps <= env.MAX_STEPS
            if not won:
                assert out.error_kind == "step_limit" and out.counts_for_value


async def test_an_off_middle_guess_asks_for_a_reflection(
    demo: tuple[ModuleType, ModuleType],
) -> None:
    env, _ = demo
    game = env.GuessEnvironment()
    await game.reset(env.make_task(0, 0).model_copy(update={"hidden": {"secret": 20}}))
    middle = await game.step(ActionProposed(text="guess[16]"))
    edge = await game.step(ActionProposed(text="guess[17]"))  # range 17..31: middle is 24
    assert "higher" in middle.text and not middle.needs_reflection
    assert "higher" in edge.text and edge.needs_reflection
    assert (game.lo, game.hi) == (18, 31)


def test_the_expert_replays_the_history_and_judges_at_each_moment(
    demo: tuple[ModuleType, ModuleType],
) -> None:
    env, expert_module = demo
    task = env.make_task(0, 1).model_copy(update={"hidden": {"secret": 20}})
    user = (
        f"## Task\n{task.instruction}\n\n## History\n"
        "Round 1\nThought: the middle is 16\nAction: guess[16]\nFeedback: higher\n\n"
        "Round 2\nThought: try 30\nAction: guess[30]\nFeedback: lower\n"
    )
    sit = expert_module.understand(task, user)
    assert sit.now == (17, 29) and sit.before_last == (17, 31)
    expert = expert_module.GuessExpert()
    assert expert.proposal_good(sit, "so guess[23]", "now")
    assert not expert.proposal_good(sit, "so guess[30]", "last")  # 24 was the middle then
    assert expert.proposal_good(sit, "guess[24]", "last")
    assert expert.last_thought(sit) == "try 30"
    assert expert.plan_good(sit, expert_module.Writer.plan_text(sit))
    assert not expert.plan_good(sit, "Plan: guess 1, 2, 3 and so on.")


async def test_a_short_simulated_run_plays_every_coalition_with_reflection(
    demo: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    config = build_config(
        {
            "env": "guess",
            "tasks": 1,
            "progress": "off",
            "run_dir": str(tmp_path / "run"),
            "sim": {"speed": 0, "experts": ["guess"]},
        }
    )
    report = await evaluate(config, Console(quiet=True))
    assert report.infra_errors == 0
    model = report.results["models"]["sim:strong"]
    assert len(model["coalitions"]) == 16
    assert {c["n"] for c in model["coalitions"].values()} == {1}
    assert set(model["shapley"]) == {"planning", "reasoning", "action", "reflection"}
    ended = [
        json.loads(line)["outcome"]
        for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()
        if '"episode.ended"' in line
    ]
    assert len(ended) == 16
    assert sum(o["usage"].get("reflection", {}).get("calls", 0) for o in ended) > 0
