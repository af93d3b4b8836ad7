"""Which coalition episodes a run issues, in what order, and how many at once.

The fixed plan becomes task blocks in a seeded order (skipping cells the log
already counts); an adaptive run draws its blocks from the
:class:`AdaptiveScheduler` instead. Both feed one :class:`WorkQueue`.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence

from agentbus.app.adaptive import AdaptiveScheduler
from agentbus.app.config import RunConfig
from agentbus.app.evaluation import EvaluationPlan, SpecFactory, cell_id
from agentbus.app.preparation import Prepared
from agentbus.app.workqueue import Block, WorkQueue
from agentbus.core.environment import Task

#: task blocks an adaptive run keeps in flight (per event loop), unless set
ADAPTIVE_TASKS_IN_FLIGHT = 8


def tasks_in_flight(config: RunConfig, plan: EvaluationPlan) -> int:
    """Task blocks in flight: enough to keep about 256 episodes running, at least 2.

    256 rather than fewer: episodes of one task share calls and wait on the
    environment, so a window of 128 episodes kept only about 30 requests in
    flight and cost a tenth of the throughput (benchmarks/saturation.py).

    An adaptive run holds at most ``ADAPTIVE_TASKS_IN_FLIGHT`` blocks: it can
    only stop between blocks, and everything issued before the stop still
    runs, so a wide window would spend the work the stop is meant to save (a
    two-slot game would issue 64 tasks before its first estimate).
    """
    if config.tasks_in_flight is not None:
        return config.tasks_in_flight
    per_task = plan.design_size or len(plan.coalitions)
    block = max(1, per_task * len(plan.test_models) * plan.repeats)
    per_loop = max(2, min(config.concurrency, 256) // block)
    if config.adaptive:
        per_loop = min(per_loop, ADAPTIVE_TASKS_IN_FLIGHT)
    return per_loop * (config.workers if config.executor == "ray" else 1)


def schedule_order(tasks: Sequence[Task], seed: int) -> list[Task]:
    """The tasks in a seeded random order, the same on every resume.

    The live estimate covers the first K task blocks; generators list their
    tasks in a pattern (knowledge point, then level), so in list order the
    first blocks would be the easy ones. In random order they are a random
    subset of the run's tasks, an honest sample of the whole set.
    """
    order = list(tasks)
    random.Random(f"schedule:{seed}").shuffle(order)
    return order


def coalition_blocks(prep: Prepared, factory: SpecFactory) -> Iterator[Block]:
    """The fixed plan as task blocks, skipping cells the log already counts."""
    book = prep.service.everything.book
    for task in schedule_order(prep.plan.tasks, prep.config.seed):
        cells, specs = [], []
        for cell in prep.plan.task_cells(task):
            eid = cell_id(prep.plan, cell)
            cells.append(eid)
            if not book.is_counted(eid):
                spec = factory.build(*cell)
                attempt = book.attempts(eid) + 1
                specs.append(dataclasses.replace(spec, attempt=attempt) if attempt > 1 else spec)
        yield Block(tuple(cells), tuple(specs), task.id)


def plan_work(
    prep: Prepared, factory: SpecFactory
) -> tuple[WorkQueue, AdaptiveScheduler | None, int]:
    """The work queue of the coalition episodes (fixed plan or adaptive) and its total."""
    config, service = prep.config, prep.service

    def declare(ident: int, block: Block) -> None:
        service.expect(ident, block.cells, block.task)
        if prep.cost is not None:
            prep.cost.estimate.expect(ident, block.cells, block.task)

    def give_up(cell: str) -> None:
        service.give_up(cell)
        if prep.cost is not None:
            prep.cost.estimate.give_up(cell)

    adaptive: AdaptiveScheduler | None = None
    source: Iterator[Block] | AdaptiveScheduler
    if config.adaptive:
        adaptive = AdaptiveScheduler(
            factory,
            service,
            tasks=prep.setup.tasks,
            test_models=config.test,
            target_halfwidth=config.target_halfwidth,
            max_episodes=config.max_episodes,
            deterministic=config.llm.sampling.params().deterministic,
            done=prep.replayed,
            seed=config.seed,
        )
        source, total = adaptive, config.max_episodes or prep.plan.size()
    else:
        source, total = coalition_blocks(prep, factory), prep.plan.size()
    queue = WorkQueue(
        source,
        window=tasks_in_flight(config, prep.plan),
        max_attempts=config.attempts,
        on_block=declare,
        on_give_up=give_up,
    )
    return queue, adaptive, total
