"""RobotEnvironment: task setup (generator, dataset), guide, reset/step/score."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentbus.core import registry
from agentbus.core.environment import TaskSource
from agentbus.core.errors import UserError
from agentbus.core.messages import ActionProposed
from environments.robot.env import RobotEnvironment
from environments.robot.tasks import generated_tasks, scene_of, task_for
from tests.environments.robot.test_robot_rules import sort_world


def test_generator_makes_many_distinct_reproducible_tasks() -> None:
    setup = RobotEnvironment.setup(TaskSource(count=120, seed=7))
    tasks = setup.tasks
    assert len(tasks) == 120
    assert len({t.instruction for t in tasks}) == 120
    assert len({orjson.dumps(t.data["scene"]) for t in tasks}) == 120
    assert {t.data["kind"] for t in tasks} == {"sweep", "cabinet", "sandwich", "sort"}
    again = RobotEnvironment.setup(TaskSource(count=120, seed=7)).tasks
    assert [t.instruction for t in again] == [t.instruction for t in tasks]
    other = RobotEnvironment.setup(TaskSource(count=8, seed=8)).tasks
    assert other[0].instruction != tasks[0].instruction
    assert len(RobotEnvironment.setup(TaskSource(count=120, seed=7, limit=5)).tasks) == 5
    for t in tasks[:4]:
        assert f"(kind: {t.data['kind']})" in t.instruction and "Initial scene:" in t.instruction
        assert "reaches" in t.instruction or "Reach" in t.instruction
    assert isinstance(setup.factory(), RobotEnvironment)


def test_entry_point_names_this_class() -> None:
    assert registry.get("environments", "robot") is RobotEnvironment


def test_dataset_file_round_trip_and_clear_errors(tmp_path: Path) -> None:
    scene = sort_world().scene.model_dump(mode="json")
    del scene["round_limit"]
    good = tmp_path / "scenes.json"
    good.write_bytes(orjson.dumps({"scenes": [{"id": "my-sort", **scene}]}))
    tasks = RobotEnvironment.setup(TaskSource(dataset=good)).tasks
    assert [t.id for t in tasks] == ["my-sort"]
    assert scene_of(tasks[0]).round_limit >= 2  # computed from the policy
    with pytest.raises(UserError, match="does not exist"):
        RobotEnvironment.setup(TaskSource(dataset=tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('[{"kind": "juggle"}]')
    with pytest.raises(UserError, match=r"scene 0 field kind"):
        RobotEnvironment.setup(TaskSource(dataset=bad))
    bad.write_text('[{"kind": "sweep", "robots": [], "things": [], "goal": {}}]')
    with pytest.raises(UserError, match="scene 0 is inconsistent"):
        RobotEnvironment.setup(TaskSource(dataset=bad))
    bad.write_text("{oops")
    with pytest.raises(UserError, match="not readable JSON"):
        RobotEnvironment.setup(TaskSource(dataset=bad))
    with pytest.raises(UserError, match="at least 1"):
        RobotEnvironment.setup(TaskSource(count=0))


def test_guide_specialises_every_role() -> None:
    task = next(t for t in generated_tasks(4, 0) if t.data["kind"] == "sort")
    guide = RobotEnvironment().guide(task)
    assert set(guide) == {"system", "planning", "reasoning", "action", "reflection"}
    robots = scene_of(task).robot_names
    for name in robots:
        assert name in guide["system"] and name in guide["action"]
    assert "PICK <object> PLACE <panel>" in guide["system"]
    assert "```action\nEXECUTE\nNAME: " in guide["action"]
    assert "Next round:" in guide["reasoning"]
    # the guide never gives the solution away
    assert task.hidden["solution"][0] not in guide["action"]


async def test_step_feedback_progress_and_score() -> None:
    env = RobotEnvironment()
    obs = await env.reset(task_for("t-env", sort_world().scene))
    assert "Alice at" in obs.text and "panel1" in obs.text and "0/1" in obs.text
    fb = await env.step(
        ActionProposed(text="EXECUTE\nNAME: Alice ACTION: WAIT\nNAME: Bob ACTION: WAIT")
    )
    assert fb.valid and not fb.done and fb.success is None and "Current scene:" in fb.text
    text = (
        "EXECUTE\nNAME: Alice ACTION: PICK blue_square PLACE panel3\nNAME: Bob ACTION: WAIT\n"
        "EXECUTE\nNAME: Alice ACTION: WAIT\nNAME: Bob ACTION: PICK blue_square PLACE panel5\n"
        "EXECUTE\nNAME: Alice ACTION: WAIT\nNAME: Bob ACTION: WAIT"
    )
    fb = await env.step(ActionProposed(text=text))
    assert fb.done and fb.success and fb.reward == 1.0
    assert "1 proposed round(s) were not needed" in fb.text
    score = await env.score()
    assert score.success and score.reward == 1.0 and score.details["rounds"] == 3


async def test_round_limit_ends_the_task_unfinished() -> None:
    env = RobotEnvironment()
    await env.reset(task_for("t-limit", sort_world().scene))
    wait = "EXECUTE\nNAME: Alice ACTION: WAIT\nNAME: Bob ACTION: WAIT\n"
    fb = await env.step(ActionProposed(text=wait * 6))
    assert fb.done and fb.success is False and "Out of rounds" in fb.text
    score = await env.score()
    assert not score.success and score.reward == 0.0
