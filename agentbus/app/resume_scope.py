"""Refuse to resume a run directory into a smaller run than the one it holds.

The number of tasks and repeats may grow on resume (the generators are
prefix-stable), but results are rebuilt from every episode in the log: a
directory of 40 tasks resumed with ``--tasks 5`` ran nothing and reported
n=40 under a command line that asked for 5. Saying so is better than either
silently reporting the larger run or dropping finished work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from agentbus.core.environment import Task
from agentbus.core.errors import UserError
from agentbus.core.record import EpisodeRecord


def check_scope(
    run_dir: Path, tasks: Sequence[Task], repeats: int, records: Iterable[EpisodeRecord]
) -> None:
    """UserError when the log holds episodes of tasks or repeats this run does not have."""
    known = {task.id for task in tasks}
    outside: set[str] = set()
    most_repeats = 0
    for record in records:
        if record.task_id not in known:
            outside.add(record.task_id)
        if record.kind == "coalition":
            most_repeats = max(most_repeats, record.repeat + 1)
    if outside:
        raise UserError(
            f"run dir {run_dir} holds episodes of {len(outside)} task(s) outside this run's "
            f"{len(known)} (a smaller --tasks, --limit or another dataset?); its results "
            "would count them: resume it with --resume DIR (its own settings) or a larger "
            "--tasks, or use another --run-dir"
        )
    if most_repeats > repeats:
        raise UserError(
            f"run dir {run_dir} holds {most_repeats} repeats per task, this run asks for "
            f"{repeats}; resume it with --resume DIR or --repeats {most_repeats}, "
            "or use another --run-dir"
        )


__all__ = ["check_scope"]
