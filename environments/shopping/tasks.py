"""Shopping tasks: one hidden goal each, over a catalogue shared by the run.

``Task.instruction`` opens with the task id (unique per task, so the expert
finds the task from the prompt's ``## Task`` section) followed by the
shopper's sentence. ``Task.data`` names the catalogue by key (the expert
rebuilds or reuses it from that key) and the phrasing; ``Task.hidden`` holds
the goal the reward checks.
"""

from __future__ import annotations

import random

from agentbus import Task, TaskSource, UserError
from environments.shopping.catalogue import Catalogue, catalogue_for
from environments.shopping.generator import generate_catalogue, make_goal
from environments.shopping.goal import Goal
from environments.shopping.phrasing import plain, rich
from environments.shopping.task import make_task
from environments.shopping.webshop import load_webshop, webshop_catalogue

_GENERATED = "generated:"
_WEBSHOP = "webshop:"


def catalogue_of(key: str) -> Catalogue:
    """The catalogue a task's key names (built on first use in this process)."""
    if key.startswith(_GENERATED):
        seed = int(key[len(_GENERATED) :])
        return catalogue_for(key, lambda: generate_catalogue(seed))
    if key.startswith(_WEBSHOP):
        return webshop_catalogue(key)
    raise UserError(f"shopping: unknown catalogue key {key!r}")


def goal_of(task: Task) -> Goal:
    return Goal.from_json(task.hidden["goal"])


def generated_tasks(count: int, seed: int) -> tuple[Catalogue, list[Task]]:
    if count < 1:
        raise UserError(f"shopping: the task count must be at least 1 (got {count})")
    key = f"{_GENERATED}{seed}"
    catalogue = catalogue_of(key)
    tasks = []
    for i in range(count):
        goal, is_rich = make_goal(catalogue, seed, i)
        rng = random.Random(f"shopping-phrase-{seed}-{i}")
        sentence = rich(goal, rng) if is_rich else plain(goal)
        task_id = f"shop-{seed}-{i:03d}"
        tasks.append(make_task(task_id, key, goal, sentence, "rich" if is_rich else "plain"))
    return catalogue, tasks


def tasks_from(source: TaskSource) -> tuple[Catalogue, list[Task]]:
    if source.dataset is not None:
        catalogue, tasks = load_webshop(source.dataset, source.knowledge)
    else:
        catalogue, tasks = generated_tasks(source.count, source.seed)
    return catalogue, tasks[: source.limit] if source.limit is not None else tasks


__all__ = ["catalogue_of", "generated_tasks", "goal_of", "tasks_from"]
