"""Tally tasks: add up a short list of whole numbers.

Both halves of the environment need the tasks: the adapter scores against the
hidden total and the simulated expert answers from it, so they live here,
apart from either. ``Task.instruction`` carries the task id, which keeps it
unique: the expert finds a prompt's task by that text.
"""

from __future__ import annotations

import random

from agentbus import Task, TaskSource, generated_count

ENV = "tally"


def make_task(seed: int, index: int) -> Task:
    rng = random.Random(f"tally:{seed}:{index}")
    numbers = [rng.randint(2, 40) for _ in range(rng.randint(3, 6))]
    shown = ", ".join(map(str, numbers))
    return Task(
        id=f"tally-{seed}-{index:03d}",
        env=ENV,
        instruction=f"Tally task {seed}-{index}: add up the numbers {shown}.",
        data={"numbers": numbers},
        hidden={"total": sum(numbers)},
    )


def tasks_from(source: TaskSource) -> list[Task]:
    """``--tasks`` seeded tasks (the first ``--limit``); no dataset format."""
    count = generated_count(source, ENV, "it uses its seeded generator (--tasks, --seed)")
    return [make_task(source.seed, i) for i in range(count)]
