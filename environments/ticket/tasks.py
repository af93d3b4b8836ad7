"""Ticket tasks: the two travellers in ``Task.data``, the optimum in ``Task.hidden``."""

from __future__ import annotations

from agentbus import Task, TaskSource, generated_count
from environments.ticket.desk import Desk
from environments.ticket.generator import make_pair
from environments.ticket.world import (
    AIRPORT_MINUTES,
    CONFLICT_COST,
    GAP_PER_HOUR,
    Traveller,
    solve,
)

ENV = "ticket"
MAX_STEPS = 10


def instruction_for(task_id: str, a: Traveller, b: Traveller, destination: str) -> str:
    return (
        f"Ticket task {task_id}: {a.name} (from {a.origin}) and {b.name} (from {b.origin}) "
        f"meet in {destination} today. Book one flight for each. A booking costs both fares, "
        f"plus ${GAP_PER_HOUR:.0f} for every hour between their arrivals, plus "
        f"${CONFLICT_COST:.0f} for each flight that overlaps its traveller's calendar (they "
        f"leave for the airport {AIRPORT_MINUTES} minutes before take-off). Book the cheapest "
        "combination."
    )


def make_task(task_id: str, a: Traveller, b: Traveller, destination: str) -> Task:
    (fa, fb), best = solve(a, b)
    return Task(
        id=task_id,
        env=ENV,
        instruction=instruction_for(task_id, a, b, destination),
        data={"travellers": [a.to_json(), b.to_json()], "destination": destination},
        hidden={"optimum": [fa, fb], "optimum_cost": best},
    )


def desk_of(task: Task) -> Desk:
    a, b = (Traveller.from_json(t) for t in task.data["travellers"])
    return Desk(a, b, str(task.data["destination"]))


def tasks_from(source: TaskSource) -> list[Task]:
    count = generated_count(source, ENV, "it uses its seeded generator")
    out = []
    for i in range(count):
        a, b, dest = make_pair(source.seed, i)
        out.append(make_task(f"ticket-{source.seed}-{i:03d}", a, b, dest))
    return out
