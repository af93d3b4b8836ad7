"""The best-combination agent: each slot on the model with the highest phi for it.

After the coalition episodes, ``--best`` runs one more agent on every task:
each varied slot filled by the model :func:`attribution.multi.best_assignment`
picks (the one rule, shared with results files). Its episodes are records of
kind ``best``, counted by the same :class:`agentbus.core.record.RecordBook` rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from agentbus.app.evaluation import EvaluationPlan, SpecFactory
from agentbus.app.workqueue import Block
from agentbus.core.environment import Task
from agentbus.core.episode import EpisodeSpec
from agentbus.core.record import EpisodeRecord, RecordBook, RecordKind
from attribution.multi import best_assignment
from attribution.rates import rate_interval
from attribution.service import AttributionService

BEST: RecordKind = "best"


class BestRun:
    """Chooses the best-combination assignment, hands out its episodes, sums them up."""

    def __init__(self) -> None:
        self.book = RecordBook()
        self.assignment: dict[str, str] | None = None

    def observe(self, record: EpisodeRecord) -> None:
        if record.kind != BEST:
            return
        if self.book.add(record).counted:
            self.assignment = dict(record.assignment)

    def choose(self, service: AttributionService, plan: EvaluationPlan) -> dict[str, str] | None:
        """slot -> model for every slot of the agent; None while some phi is not estimable."""
        table: dict[str, dict[str, float]] = {}
        for model in plan.test_models:
            est = service.estimates(model)
            if est is None:
                return None
            table[model] = {slot: est.value(slot) for slot in plan.varied}
        chosen = best_assignment(table, plan.varied, plan.default_model)
        return {slot: chosen.get(slot, plan.default_model) for slot in plan.agent.slots}

    def blocks(
        self, factory: SpecFactory, assignment: dict[str, str], tasks: Iterable[Task]
    ) -> Iterator[Block]:
        """One block per task with the episode still to run (counted ones are skipped)."""
        label = "+".join(f"{slot}={model}" for slot, model in assignment.items())
        for task in tasks:
            cell = f"{BEST}|{label}|{task.id}|r0"
            specs: tuple[EpisodeSpec, ...] = ()
            if not self.book.is_counted(cell):
                spec = factory.build_assignment(
                    assignment,
                    task,
                    0,
                    episode=cell,
                    metadata={"kind": BEST, "default_model": factory.plan.default_model},
                )
                specs = (spec,)
            yield Block((cell,), specs, task.id)

    def summary(self) -> dict[str, Any] | None:
        """Accuracy with a Wilson interval, over the tasks the choice was made on.

        The assignment was picked by the phi of the coalition runs on these same
        tasks, so the accuracy is optimistic (selection on the same data);
        ``same_tasks`` says so to every report.
        """
        records = list(self.book.records(BEST))
        if not records:
            return None
        rate = rate_interval([r.reward for r in records], [r.task_id for r in records])
        return {
            "assignment": self.assignment,
            "n": rate["tasks"],
            "acc": rate["mean"],
            "ci_low": rate["ci_low"],
            "ci_high": rate["ci_high"],
            "same_tasks": True,
        }
