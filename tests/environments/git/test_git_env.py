"""GitEnvironment: task sources, observation, steps, reflection trigger, budget, score."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentbus.core import registry
from agentbus.core.environment import Task, TaskSource
from agentbus.core.errors import UserError
from agentbus.core.messages import ActionProposed
from environments.git.env import GitEnvironment
from environments.git.levels import parse_levels
from environments.git.tasks import puzzle_task, task_puzzle

LEVELS = Path(__file__).resolve().parents[4] / "shared" / "learngitbranching" / "levels.json"


def act(text: str) -> ActionProposed:
    return ActionProposed(text=text)


def test_registered_under_its_entry_point() -> None:
    assert registry.get("environments", "git") is GitEnvironment


def test_generator_tasks_have_unique_instructions_and_hidden_solutions() -> None:
    setup = GitEnvironment.setup(TaskSource(count=30, seed=4))
    tasks = setup.tasks
    assert len(tasks) == 30 and len({t.instruction for t in tasks}) == 30
    assert len({t.id for t in tasks}) == 30
    for task in tasks:
        assert task.env == "git" and task.hidden["solution"]
        assert "Goal tree: {" in task.instruction
        assert task_puzzle(task).solved_by(task.hidden["solution"])
    assert len(GitEnvironment.setup(TaskSource(count=30, seed=4, limit=5)).tasks) == 5
    with pytest.raises(UserError):
        GitEnvironment.setup(TaskSource(count=0))


@pytest.mark.skipif(not LEVELS.exists(), reason="shared level file not available")
def test_level_file_tasks() -> None:
    tasks = GitEnvironment.setup(TaskSource(dataset=LEVELS)).tasks
    assert len(tasks) == 31
    assert any(t.id == "git-remote/tracking" for t in tasks)
    assert all("Git puzzle" in t.instruction for t in tasks)


def test_bad_dataset_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        GitEnvironment.setup(TaskSource(dataset=tmp_path / "nope.json"))
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"[]")
    with pytest.raises(UserError):
        GitEnvironment.setup(TaskSource(dataset=empty))


def rebase_task() -> Task:
    level = {
        "id": "t/rebase",
        "name": "Rebase",
        "start_tree": {
            "commits": {
                "C0": {"parents": []},
                "C1": {"parents": ["C0"]},
                "C2": {"parents": ["C1"]},
                "C3": {"parents": ["C1"]},
            },
            "branches": {"main": {"target": "C2"}, "bugFix": {"target": "C3"}},
            "HEAD": {"target": "bugFix"},
        },
        "goal_tree": {
            "commits": {
                "C0": {"parents": []},
                "C1": {"parents": ["C0"]},
                "C2": {"parents": ["C1"]},
                "C3'": {"parents": ["C2"]},
            },
            "branches": {"main": {"target": "C2"}, "bugFix": {"target": "C3'"}},
            "HEAD": {"target": "bugFix"},
        },
        "solution": "git rebase main",
    }
    return puzzle_task(parse_levels([level]).puzzles[0])


async def test_reset_shows_both_trees_and_a_solving_step_ends_the_episode() -> None:
    env = GitEnvironment()
    task = rebase_task()
    obs = await env.reset(task)
    assert "Current tree: " in obs.text and "Goal tree: " in obs.text
    current = orjson.loads(obs.text.split("Current tree: ")[1].splitlines()[0])
    assert current["branches"] == {"main": "C2", "bugFix": "C3"} and current["HEAD"] == "bugFix"
    fb = await env.step(act("git rebase main"))
    assert fb.done and fb.success and fb.reward == 1.0 and fb.valid
    assert "Puzzle solved" in fb.text and '"bugFix":"C3\'"' in fb.text
    score = await env.score()
    assert score.success and score.reward == 1.0 and score.details["moves"] == 1


async def test_two_unchanged_steps_ask_for_reflection_and_errors_are_feedback() -> None:
    env = GitEnvironment()
    await env.reset(rebase_task())
    first = await env.step(act("git rebsae main"))
    assert not first.valid and not first.done and not first.needs_reflection
    assert "not a git command" in first.text and "did not change" in first.text
    second = await env.step(act("git status"))
    assert second.valid and second.needs_reflection
    third = await env.step(act("git commit"))
    assert not third.needs_reflection and not third.done
    fourth = await env.step(act("undo"))
    assert not fourth.needs_reflection and fourth.data["changed"]
    # lines of the feedback never look like a History round header
    for fb in (first, second, third, fourth):
        assert not any(
            ln.startswith(("Round ", "Action:", "Thought:", "## ")) for ln in fb.text.splitlines()
        )


async def test_budget_ends_a_failing_episode() -> None:
    env = GitEnvironment()
    task = rebase_task()
    await env.reset(task)
    budget = task.data["budget"]
    assert budget == 6
    for i in range(budget):
        fb = await env.step(act("git status"))
        assert fb.done == (i == budget - 1)
    assert fb.success is False and "No commands left" in fb.text
    score = await env.score()
    assert not score.success and score.reward == 0.0 and score.details["moves"] == budget


def test_guide_names_the_action_syntax() -> None:
    guide = GitEnvironment().guide(rebase_task())
    assert set(guide) == {"system", "planning", "reasoning", "action", "reflection"}
    assert "```action\ngit rebase main\n```" in guide["action"]
    assert "git cherry-pick" in guide["system"]
