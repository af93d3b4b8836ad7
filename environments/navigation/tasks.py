"""Navigation tasks: a city, the core requirements, and the hidden future.

``Task.instruction`` carries the task id and the core requirements (unique
per task). ``Task.data`` holds the city and the core requirements;
``Task.hidden`` the requirements still to come, the seeded arrival schedule
and the exact optimum after each arrival.
"""

from __future__ import annotations

from agentbus import Task, TaskSource, generated_count
from environments.navigation.city import City
from environments.navigation.constraints import Constraint
from environments.navigation.generator import Instance, make_instance
from environments.navigation.trip import Trip

ENV = "navigation"
MAX_ROUNDS = 8


def instruction_for(task_id: str, inst: Instance) -> str:
    wishes = "; ".join(c.text() for c in inst.core)
    return (
        f"Navigation task {task_id}: plan a one-day route for a traveller, starting and ending "
        f"at the hotel at 09:00. Requirements: {wishes}. Among the routes that meet every "
        "requirement, the shortest one is best. The traveller may add requirements while you "
        "plan; keep meeting the earlier ones."
    )


def make_task(task_id: str, inst: Instance) -> Task:
    return Task(
        id=task_id,
        env=ENV,
        instruction=instruction_for(task_id, inst),
        data={"city": inst.city.to_json(), "core": [c.to_json() for c in inst.core]},
        hidden={
            "pool": [c.to_json() for c in inst.pool],
            "arrivals": list(inst.arrivals),
            "optima": [[list(stops), tenths] for stops, tenths in inst.optima],
        },
    )


def trip_of(task: Task) -> Trip:
    return Trip(
        city=City.from_json(task.data["city"]),
        core=[Constraint.from_json(c) for c in task.data["core"]],
        pool=[Constraint.from_json(c) for c in task.hidden["pool"]],
        arrivals=[bool(a) for a in task.hidden["arrivals"]],
    )


def optima_of(task: Task) -> list[tuple[tuple[str, ...], int]]:
    return [(tuple(stops), int(tenths)) for stops, tenths in task.hidden["optima"]]


def tasks_from(source: TaskSource) -> list[Task]:
    count = generated_count(source, ENV, "it uses its seeded generator (--tasks, --seed)")
    return [
        make_task(f"nav-{source.seed}-{i:03d}", make_instance(source.seed, i)) for i in range(count)
    ]
