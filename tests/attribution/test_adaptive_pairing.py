"""An adaptive run does not strand itself: it ends only when no pairing-preserving step is left.

At temperature 0 each (coalition, task) pair runs once. When the within-task
correlation falls below 0.05 the service suggests single coalitions; the
scheduler ran each on a least-used task at random, so after a while every
task held some coalition, the next block suggestion needed an untouched task,
found none and ended the run ("the tasks ran out ... give more tasks"): an
audit saw a ticket run end at 822 of 3,200 possible episodes, one coalition
resting on 12 tasks. Here the service's suggestions are scripted (the
scheduler's rule is what is under test): singles that touch every task, then
blocks. The run must go on until every pair has run, fill the tasks in
whole, and say how much work it did when it ends.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agentbus.app.adaptive import AdaptiveScheduler
from agentbus.core.environment import Task
from attribution.suggestion import Suggestion

SLOTS = ("a", "b")
KEYS = ("", "a", "b", "a+b")
MODEL = "sim:strong"


class Scripted:
    """The service's side: estimates exist, suggestions follow ``script``, never done."""

    stop = "mvp"

    def __init__(self, script: list[Suggestion]) -> None:
        self.script = script

    def estimates(self, model: str) -> object:
        return object()

    def suggest(self) -> Suggestion:
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def done(self, target: float) -> bool:
        return False


def _scheduler(tasks: int, script: list[Suggestion]) -> AdaptiveScheduler:
    coalitions = [tuple(k.split("+")) if k else () for k in KEYS]

    def build(model: str, coalition: tuple[str, ...], task: Task, repeat: int) -> Any:
        key = "+".join(coalition)
        return SimpleNamespace(episode_id=f"{model}|{key}|{task.id}|{repeat}", task=task, key=key)

    plan = SimpleNamespace(varied=SLOTS, task_coalitions=lambda task: coalitions)
    return AdaptiveScheduler(
        SimpleNamespace(plan=plan, build=build),  # type: ignore[arg-type]
        Scripted(script),  # type: ignore[arg-type]
        tasks=[Task(id=f"t{i}", env="x", instruction="") for i in range(tasks)],
        test_models=[MODEL],
        target_halfwidth=0.05,
        max_episodes=None,
        deterministic=True,
    )


async def _drain(scheduler: AdaptiveScheduler) -> list[tuple[str, str]]:
    ran = []
    while (block := await scheduler()) is not None:
        ran += [(s.key, s.task.id) for s in block.specs]
    return ran


async def test_singles_then_blocks_run_every_pair_and_keep_tasks_whole() -> None:
    tasks = 6
    singles = [Suggestion(MODEL, "single", [("a", 1)], "greedy Neyman")] * tasks
    block = Suggestion(MODEL, "block", [(k, 1) for k in KEYS], "within-task correlation 0.2")
    scheduler = _scheduler(tasks, [*singles, block])
    ran = await _drain(scheduler)
    assert len(ran) == len(set(ran)) == tasks * len(KEYS)  # every pair once: nothing stranded
    assert "24 of 24 (coalition, task) pairs run, 0 left" in scheduler.stop_reason


async def test_an_exhausted_single_coalition_does_not_end_the_run() -> None:
    # 'a' has run on every task; the service keeps asking for it
    scheduler = _scheduler(3, [Suggestion(MODEL, "single", [("a", 1)], "greedy Neyman")])
    ran = await _drain(scheduler)
    assert len(set(ran)) == 3 * len(KEYS)
    assert scheduler.stop_reason.startswith("the tasks ran out")


async def test_singles_fill_the_fullest_task_first() -> None:
    # the first block leaves one task complete; singles for another key then go to tasks
    # that hold the most coalitions, so tasks fill in whole instead of one pair each
    script = [
        Suggestion(MODEL, "block", [(k, 1) for k in KEYS[:3]], "x"),
        Suggestion(MODEL, "single", [("a+b", 1)], "greedy Neyman"),
        Suggestion(MODEL, "single", [("a+b", 1)], "greedy Neyman"),
    ]
    scheduler = _scheduler(8, script)
    first = await scheduler()
    second = await scheduler()
    assert first is not None and second is not None
    assert second.specs[0].task.id == first.specs[0].task.id  # completes the started task
