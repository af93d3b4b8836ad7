"""Power planning: how many tasks (and episodes) a target half-width needs.

Every estimator's interval is over tasks (:mod:`attribution.estimators`):
half-width = t_{T-1} * sd / sqrt(T), with sd the spread of the per-task
values phi_t. That spread already holds what the plan depends on: each
coalition's variance within a task, their correlation within a task (an
easy task is easy for every coalition, which cancels in phi), the reward
noise and the tasks' own differences. A pilot measures it; the plan is the
smallest T whose predicted half-width is under the target, per slot, and
for telling the top slot from the second (the interval of their difference
excluding zero at the gap the pilot saw).

From a pilot that played every coalition, any sampled estimator's spread is
measured too: its design is drawn for each pilot task and read off the
task's complete row (the same tasks, the coalitions it would have run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from attribution.estimators import Estimator
from attribution.estimators.designs import FloatArray
from attribution.game import Game

#: widening of the anytime-valid intervals ``--stop mvp`` uses, near the planned size
ANYTIME_WIDER = 1.5


def halfwidth(sd: float, tasks: int, confidence: float = 0.95) -> float:
    """Predicted half-width of the interval over ``tasks`` tasks."""
    if tasks < 2:
        return math.inf
    q = float(special.stdtrit(tasks - 1, 0.5 + confidence / 2))
    return q * sd / math.sqrt(tasks)


def tasks_for(sd: float, target: float, confidence: float = 0.95) -> int:
    """Smallest task count whose predicted half-width is at most ``target``."""
    if sd <= 0:
        return 2
    z = float(special.ndtri(0.5 + confidence / 2))
    t = max(2, math.ceil((z * sd / target) ** 2))
    while halfwidth(sd, t, confidence) > target:
        t += 1
    return t


@dataclass(frozen=True)
class SlotPlan:
    slot: str
    value: float
    sd: float
    tasks: int


@dataclass(frozen=True)
class Plan:
    """A plan for one test model and estimator."""

    estimator: str
    per_task: int
    pilot_tasks: int
    target: float
    slots: tuple[SlotPlan, ...]
    top: str
    second: str
    gap: float
    gap_sd: float
    top_tasks: int | None
    confidence: float = 0.95

    @property
    def tasks(self) -> int:
        return max(s.tasks for s in self.slots)

    @property
    def episodes(self) -> int:
        return self.tasks * self.per_task

    def predicted(self, tasks: int) -> FloatArray:
        """Predicted half-width of every slot at ``tasks`` tasks."""
        return np.array([halfwidth(s.sd, tasks, self.confidence) for s in self.slots])


def plan(phi_t: FloatArray, slots: tuple[str, ...], target: float, estimator: Estimator) -> Plan:
    """The plan from per-task values of a pilot (tasks x slots)."""
    if len(phi_t) < 2:
        raise ValueError("a plan needs a pilot of at least two complete tasks")
    values = phi_t.mean(axis=0)
    sd = phi_t.std(axis=0, ddof=1)
    rows = tuple(
        SlotPlan(s, float(v), float(d), tasks_for(float(d), target))
        for s, v, d in zip(slots, values, sd, strict=True)
    )
    order = np.argsort(-values, kind="stable")
    top, second = int(order[0]), int(order[1]) if len(order) > 1 else int(order[0])
    diff = phi_t[:, top] - phi_t[:, second]
    gap = float(diff.mean())
    gap_sd = float(diff.std(ddof=1))
    top_tasks = tasks_for(gap_sd, gap) if gap > 0 and len(order) > 1 else None
    return Plan(
        estimator=estimator.name,
        per_task=estimator.episodes_per_task(),
        pilot_tasks=len(phi_t),
        target=target,
        slots=rows,
        top=slots[top],
        second=slots[second],
        gap=gap,
        gap_sd=gap_sd,
        top_tasks=top_tasks,
    )


def pilot_values(game: Game, estimator: Estimator, seed: int = 0) -> FloatArray:
    """Per-task values of ``estimator`` on a pilot game.

    A pilot that ran ``estimator``'s own design is read as it is; from a
    pilot with every coalition on every task, the estimator's design is
    drawn per task and read off that task's row.
    """
    own = estimator.per_task_values(game)
    if len(own) >= 2 or estimator.name == "exact":
        return own
    exact = Estimator("exact", game.n)
    masks, rewards, _ = exact.task_arrays(game)
    if len(masks) < 2:
        return own
    full = np.asarray(rewards)  # tasks x 2^n, mask order
    drawn = estimator.design(np.random.default_rng(seed), len(full))
    return estimator.per_task(drawn, np.take_along_axis(full, drawn, axis=1))


def format_plan(plan_: Plan, model: str) -> list[str]:
    """Lines a person reads: per slot, then all slots, then top vs second."""
    at = plan_.predicted(plan_.tasks)
    lines = [
        f"{model}: {plan_.estimator}, {plan_.per_task} episodes a task, pilot of "
        f"{plan_.pilot_tasks} tasks, target +/-{plan_.target:g} (95%)",
        f"  {'slot':<28} {'phi':>7} {'sd/task':>8} {'tasks':>7} {'episodes':>9}"
        f" {'+/- at ' + format(plan_.tasks, ','):>12}",
    ]
    for s, hw in zip(plan_.slots, at, strict=True):
        eps = s.tasks * plan_.per_task
        lines.append(
            f"  {s.slot:<28} {s.value:>7.3f} {s.sd:>8.3f} {s.tasks:>7,} {eps:>9,} {hw:>12.4f}"
        )
    widest = float(np.max(at))
    lines.append(
        f"  every slot at +/-{plan_.target:g}: {plan_.tasks:,} tasks, {plan_.episodes:,} episodes "
        f"(predicted widest +/-{widest:.4f})"
    )
    if plan_.top_tasks is None:
        lines.append(f"  top vs second: {plan_.top} and {plan_.second} are tied in the pilot")
    else:
        t = plan_.top_tasks
        lines.append(
            f"  top vs second: {plan_.top} over {plan_.second} by {plan_.gap:.3f}: "
            f"{t:,} tasks ({t * plan_.per_task:,} episodes) at 95%; --stop mvp's "
            f"anytime-valid intervals need about {ANYTIME_WIDER**2:.1f}x that"
        )
    return lines


def projection_note(phi_t: FloatArray, target: float, per_task: int) -> str | None:
    """One status line for a live run: tasks (and episodes) the target needs at this spread."""
    if len(phi_t) < 5:
        return None
    sd = phi_t.std(axis=0, ddof=1)
    need = max(tasks_for(float(d), target) for d in sd)
    now = len(phi_t)
    hw = max(halfwidth(float(d), now) for d in sd)
    return (
        f"plan: +/-{target:g} needs about {need:,} tasks ({need * per_task:,} episodes); "
        f"{now} in, widest +/-{hw:.3f}"
    )


def replay(
    phi_pool: FloatArray, pilot: int, target: float, reps: int, rng: np.random.Generator
) -> FloatArray:
    """Predicted over realised half-width, per replayed pilot and slot.

    Each replay draws a pilot of ``pilot`` tasks from a pool of per-task
    values (with replacement), plans for ``target``, extends the same tasks
    with fresh ones to the planned size (as a run resumed in its directory
    does) and compares every slot's prediction with the half-width that run
    gets. How far the ratios spread around 1 is what one pilot can promise.
    """
    ratios = np.empty((reps, phi_pool.shape[1]))
    for i in range(reps):
        first = rng.integers(0, len(phi_pool), pilot)
        sd = phi_pool[first].std(axis=0, ddof=1)
        tasks = max(pilot, max(tasks_for(float(d), target) for d in sd))
        rest = rng.integers(0, len(phi_pool), tasks - pilot)
        run_sd = phi_pool[np.concatenate([first, rest])].std(axis=0, ddof=1)
        ratios[i] = sd / np.where(run_sd > 0, run_sd, np.nan)  # same t quantile and size
    return ratios
