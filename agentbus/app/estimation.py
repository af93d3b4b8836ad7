"""The run's estimator (``--estimator``) as a plan: which coalitions each task runs.

A sampled estimator draws its coalitions per task
(:meth:`attribution.estimators.Estimator.design`); the draw is seeded by the
run's seed and the task id, so a resumed run (and every test model of the
run) plays the same coalitions on the same task, and episode ids stay
``MODEL|COALITION|TASK|rREPEAT``. ``exact`` leaves the plan as it is.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from agentbus.app.evaluation import EvaluationPlan
from agentbus.core.environment import Task
from attribution.estimators import Estimator
from attribution.service import AttributionService


def task_seed(seed: int, task_id: str) -> int:
    """A seed for one task's draw that does not depend on the process (no hash())."""
    digest = hashlib.sha256(f"design:{seed}:{task_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def designer(
    estimator: Estimator, varied: Sequence[str], seed: int
) -> Callable[[Task], list[tuple[str, ...]]]:
    """task -> the coalitions (slot names) ``estimator`` draws for it."""
    cache: dict[str, list[tuple[str, ...]]] = {}
    slots = tuple(varied)

    def design(task: Task) -> list[tuple[str, ...]]:
        found = cache.get(task.id)
        if found is None:
            masks = estimator.design(np.random.default_rng(task_seed(seed, task.id)), 1)[0]
            found = [
                tuple(s for i, s in enumerate(slots) if int(m) >> i & 1) for m in masks.tolist()
            ]
            cache[task.id] = found
        return found

    return design


def with_design(plan: EvaluationPlan, estimator: str, seed: int) -> EvaluationPlan:
    """``plan`` with the per-task coalitions of ``estimator`` (unchanged for exact)."""
    chosen = Estimator.make(estimator, len(plan.varied))
    if chosen.name == "exact":
        return plan
    return dataclasses.replace(
        plan,
        design=designer(chosen, plan.varied, seed),
        design_size=chosen.episodes_per_task(),
    )


def live_status(
    rate_note: Callable[[], str | None], service: AttributionService | None
) -> Callable[[], str | None]:
    """The progress display's status line: rate limits, and an adaptive run's projection."""

    def note() -> str | None:
        parts = [rate_note(), service.projection_note() if service is not None else None]
        text = "; ".join(p for p in parts if p)
        return text or None

    return note
