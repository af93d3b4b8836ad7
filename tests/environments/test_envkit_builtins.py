"""Every built-in environment stands on the environment kit (issue 44 item 1).

The experts share the kit's task index, section reading and situation memo
(:class:`agentbus.ExpertKit`); the environments that read a task file or
run a generator share :func:`environments.task_source.loaded_or_generated`;
the experts that replay rounds share :class:`agentbus.RoundsExpert`.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentbus import ChatMessage, ExpertKit, ExpertQuery, Task, TaskSource, UserError, Verdict
from agentbus.core import registry
from agentbus.sim.model import load_experts
from environments.task_source import loaded_or_generated

BUILT_IN = ("atp", "git", "math", "navigation", "os", "robot", "shopping", "ticket", "tools")


def test_every_built_in_expert_is_an_expert_kit() -> None:
    experts = {e.env: e for e in load_experts(BUILT_IN)}
    assert set(experts) == set(BUILT_IN)
    outside = sorted(env for env, e in experts.items() if not isinstance(e, ExpertKit))
    assert outside == []
    assert set(BUILT_IN) <= set(registry.names("experts"))


def test_a_kit_expert_finds_its_task_and_leaves_others() -> None:
    for expert in load_experts(("git", "os", "robot")):
        mine = Task(id="t1", env=expert.env, instruction=f"Do the {expert.env} thing.")
        other = Task(id="t2", env="elsewhere", instruction="Something else.")
        expert.add_tasks(iter([mine, other]))  # an iterator is read once
        user = f"## Task\n{mine.instruction}\n\n## History\n(none)"
        found = expert.find_task(
            [{"role": "system", "content": "x"}, {"role": "user", "content": user}]
        )
        assert found == mine
        elsewhere = "## Task\nSomething else."
        assert expert.find_task([{"role": "user", "content": elsewhere}]) is None


def test_loaded_or_generated_reads_or_generates_then_cuts_to_the_limit() -> None:
    def generate(count: int, seed: int) -> list[str]:
        return [f"g{seed}-{i}" for i in range(count)]

    def load(path: Path) -> list[str]:
        return [f"{path.name}-{i}" for i in range(4)]

    assert loaded_or_generated(TaskSource(count=5, seed=2, limit=2), "x", load, generate) == [
        "g2-0",
        "g2-1",
    ]
    assert loaded_or_generated(TaskSource(count=3), "x", load, generate) == ["g0-0", "g0-1", "g0-2"]
    got = loaded_or_generated(TaskSource(dataset=Path("d.json"), limit=3), "x", load, generate)
    assert got == ["d.json-0", "d.json-1", "d.json-2"]
    with pytest.raises(UserError, match=r"^x: the generator needs count >= 1$"):
        loaded_or_generated(TaskSource(count=0), "x", load, generate)


def test_robot_answers_by_the_kit_draw_only_for_a_wrong_answer() -> None:
    """The robot's planning answer comes from the kit's RoleAnswer: right and
    malformed answers draw nothing from the random stream, a wrong one does."""
    from environments.robot.env import RobotEnvironment

    setup = RobotEnvironment.setup(TaskSource(count=1, seed=0))
    task = setup.tasks[0]
    (expert,) = load_experts(("robot",))
    expert.add_tasks(setup.tasks)
    messages: list[ChatMessage] = [{"role": "user", "content": f"## Task\n{task.instruction}\n"}]
    query = ExpertQuery(role="planning", task=task, messages=messages)
    for verdict, draws in (
        (Verdict(correct=True, malformed=False), False),
        (Verdict(correct=True, malformed=True), False),
        (Verdict(correct=False, malformed=False), True),
    ):
        rng = random.Random(7)
        before = rng.getstate()
        expert.respond(query, verdict, rng)
        assert (rng.getstate() != before) is draws
