"""Turning scenes into tasks: generated sets and JSON scene files.

``Task.instruction`` carries the task id, the kind, the goal and the initial
scene, so it is unique per task and the expert can find the task from the
prompt's ``## Task`` section alone. ``Task.data`` holds the scene as JSON;
``Task.hidden`` holds the policy's solution (never shown to the agent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from agentbus import Task, TaskSource, UserError, read_bounded
from environments.robot.generator import generate, with_round_limit
from environments.robot.rules import rules_for
from environments.robot.scene import Scene, round_text

ENV = "robot"

DATASET_HELP = (
    'a robot dataset is a JSON file holding a list of scenes (or {"scenes": [...]}); each '
    "scene has kind (sweep|cabinet|sandwich|sort), robots [{name, position, reach, tool}], "
    "things [{name, position, place}], goal and optionally id and round_limit"
)


def instruction_for(task_id: str, scene: Scene) -> str:
    rules = rules_for(scene)
    return "\n".join(
        [
            f"Robot collaboration task {task_id} (kind: {scene.kind}).",
            f"Goal: {rules.goal_text()}",
            "Initial scene:",
            rules.describe(rules.initial()),
            f"Round limit: {scene.round_limit} rounds; every round each robot "
            f"({', '.join(scene.robot_names)}) performs exactly one action.",
        ]
    )


def task_for(task_id: str, scene: Scene) -> Task:
    rules = rules_for(scene)
    plan = rules.rollout(rules.initial()) or []
    return Task(
        id=task_id,
        env=ENV,
        instruction=instruction_for(task_id, scene),
        data={"scene": scene.model_dump(mode="json"), "kind": scene.kind},
        hidden={
            "solution": [round_text(r, rules.robots) for r in plan],
            "optimal_rounds": len(plan),
        },
    )


def scene_of(task: Task) -> Scene:
    return Scene.model_validate(task.data["scene"])


def generated_tasks(count: int, seed: int) -> list[Task]:
    if count < 1:
        raise UserError(f"robot: the task count must be at least 1 (got {count})")
    return [
        task_for(f"robot-{s.kind}-{seed}-{i:03d}", s) for i, s in enumerate(generate(count, seed))
    ]


def load_dataset(path: Path) -> list[Task]:
    """Scenes from a JSON file; a clear one-line error for anything wrong with it."""
    try:
        raw: Any = orjson.loads(read_bounded(path, "robot dataset"))
    except FileNotFoundError:
        raise UserError(f"robot dataset {path} does not exist ({DATASET_HELP})") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise UserError(f"robot dataset {path} is not readable JSON: {exc}") from None
    items = raw.get("scenes") if isinstance(raw, dict) else raw
    if not isinstance(items, list) or not items:
        raise UserError(f"robot dataset {path}: no scenes found ({DATASET_HELP})")
    tasks: list[Task] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise UserError(f"robot dataset {path}: scene {i} is not an object")
        item = dict(item)
        task_id = str(item.pop("id", f"{path.stem}-{i:03d}"))
        try:
            scene = Scene.model_validate(item)
            if "round_limit" not in item:
                scene = with_round_limit(scene)
            task = task_for(task_id, scene)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UserError(
                f"robot dataset {path}: scene {i} field {where}: {first['msg']}"
            ) from None
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise UserError(f"robot dataset {path}: scene {i} is inconsistent: {exc}") from None
        tasks.append(task)
    return tasks


def tasks_from(source: TaskSource) -> list[Task]:
    tasks = (
        load_dataset(source.dataset)
        if source.dataset
        else generated_tasks(source.count, source.seed)
    )
    return tasks[: source.limit] if source.limit is not None else tasks
