"""Accuracy and cost of every per-slot assignment of models, and their Pareto front.

With a default model and test models m_1..m_{k-1}, an *assignment* puts each
varied slot on one of the k models: k^n agents. The coalition runs measured
some of them exactly: every assignment that uses at most one test model is a
coalition of that model's game (S_m = the slots on m). The others mix test
models, and are *predicted* from the per-model coalition tables. Accuracy
combines on the logit scale, where success probabilities add without
leaving [0, 1] (the simulator composes skills the same way), cost adds:

    logit v(A) = logit v_0 + sum over test models m used by A of
                 (logit v_m(S_m) - logit v_m({}))
    cost(A)    = cost_0 + sum over m of (cost_m(S_m) - cost_m({}))

Everything that happens among the slots of one test model (its interactions
included) comes from that model's measured coalition value; what is assumed
is that the gains of different test models add up on that scale (no
interaction across models). Running the most promising assignments for real
(``--pareto K``) checks exactly that assumption, paired by task.

Every coalition ran the same tasks, so the columns of one prediction are
paired by task; the interval is a bootstrap over tasks (the same resample for
every column), which keeps the correlation between them.

The front is chosen on one third of the tasks and estimated on the rest.
The front and the most accurate point are picked by their figures, so a
point estimated on the tasks that picked it is the one whose noise ran high
(the winner's curse: on tools the most accurate point was predicted 0.834
against a truth of 0.731). Here the tasks are split once, by a hash of the
task id (so the split cannot depend on outcomes and survives a resume): a
third of them (the *selection* tasks) choose the front and the most
accurate point; every point so chosen is then estimated on the other two
thirds (the *held-out* tasks), which had no part in choosing it, so its
figure and per-point interval are those of a point fixed in advance. Points
not chosen keep their figures over all tasks. A third for choosing and two
for estimating was picked by measurement (replications of 30-task runs from
the tools and math pools): half and half gave the same bias with intervals
about 15% wider. Below :data:`MIN_SPLIT` tasks there is nothing to split;
the front is then chosen on the tasks that estimate it, and says so.

A predicted accuracy's interval is a bootstrap percentile interval over the
tasks it is estimated on, never narrower than Wilson's for a rate measured
on as many tasks (no point-intervals at 0/n or n/n); the logit combination
smooths each column's rate (Jeffreys: (k + 1/2) / (n + 1)) instead of
clipping it. Measured accuracies (at most one test model) get Wilson
intervals over tasks (:mod:`attribution.rates`, Brown-Cai-DasGupta's
bound at one to three successes), and the selected ones are estimated on the held-out
tasks like the predictions. Costs add without a logit, and get the same split.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentbus.core.record import EpisodeRecord
from attribution.cost import mean_interval

# what moved keeps its old import path here
from attribution.pareto_terms import CoalitionTable, Terms, estimate, resamples
from attribution.rates import wilson

#: above this many assignments the front is computed but only the front is listed
LIST_LIMIT = 4096
#: share of the tasks that choose the front and the most accurate point
SELECT_SHARE = 1.0 / 3.0
#: fewer tasks than this: the front is chosen on the tasks that estimate it
MIN_SPLIT = 6


@dataclass
class Point:
    """One assignment with its predicted (or measured) accuracy and cost."""

    assignment: dict[str, str]
    acc: dict[str, Any]
    cost: dict[str, Any]
    #: True when the coalition runs measured this very agent (one test model at most)
    measured: bool
    models_used: int
    on_front: bool = False
    run: dict[str, Any] | None = field(default=None)
    #: the per-task columns behind the prediction, for the paired comparison with a real run
    acc_terms: Terms | None = field(default=None, repr=False)
    cost_terms: Terms | None = field(default=None, repr=False)
    #: chosen as the most accurate (on the selection tasks)
    most_accurate: bool = False
    #: accuracy and cost means on the selection tasks (what chose the front), and
    #: the number of selection and held-out tasks (0 held out: too few to split)
    selection: dict[str, Any] = field(default_factory=dict)
    #: "held-out" (chosen, estimated on the other tasks), "all", or "same" (too few to split)
    estimated_on: str = "all"

    def label(self, default: str) -> str:
        return label(self.assignment, default)

    def to_dict(self, default: str) -> dict[str, Any]:
        out = {
            "assignment": self.assignment,
            "label": self.label(default),
            "acc": self.acc,
            "cost_usd": self.cost,
            "source": "measured" if self.measured else "predicted",
            "on_front": self.on_front,
            "most_accurate": self.most_accurate,
            "estimated_on": self.estimated_on,
            "selection": self.selection,
        }
        if self.run is not None:
            out["run"] = self.run
        return out


def label(assignment: Mapping[str, str], default: str) -> str:
    """``planning=sim:strong, action=sim:strong-action`` (slots on the default left out)."""
    moved = [f"{slot}={model}" for slot, model in assignment.items() if model != default]
    return ", ".join(moved) if moved else f"all {default}"


def split_tasks(tasks: Iterable[str]) -> tuple[list[str], list[str]]:
    """(selection tasks, held-out tasks): a third and the rest, by a hash of the task id.

    A hash, not the order tasks were generated or finished in, so the split
    depends on nothing an outcome could change and is the same on a resume.
    """

    def key(task: str) -> bytes:
        return hashlib.blake2b(task.encode(), digest_size=8).digest()

    order = sorted(tasks, key=key)
    k = max(1, round(len(order) * SELECT_SHARE))
    return sorted(order[:k]), sorted(order[k:])


def _nondominated(figures: Mapping[int, tuple[float, float]]) -> list[int]:
    """Indices of the points no other beats on both accuracy and cost (by ``figures``)."""
    order = sorted(figures, key=lambda i: (figures[i][1], -figures[i][0]))
    out: list[int] = []
    best_acc = -np.inf
    for i in order:
        if figures[i][0] > best_acc:
            out.append(i)
            best_acc = figures[i][0]
    return out


def front(points: Sequence[Point]) -> list[Point]:
    """The points :func:`predict` put on the front, cheapest first (by reported cost)."""
    on = [p for p in points if p.on_front and p.cost["mean"] is not None]
    return sorted(on, key=lambda p: (p.cost["mean"], -(p.acc["mean"] or 0.0)))


def most_accurate(points: Sequence[Point]) -> Point | None:
    """The point :func:`predict` chose as the most accurate."""
    return next((p for p in points if p.most_accurate), None)


def assignments(slots: Sequence[str], models: Sequence[str]) -> Iterable[dict[str, str]]:
    for combo in itertools.product(models, repeat=len(slots)):
        yield dict(zip(slots, combo, strict=True))


def predict(
    records: Iterable[EpisodeRecord],
    slots: Sequence[str],
    default: str,
    test_models: Sequence[str],
    *,
    confidence: float = 0.95,
    split: bool = True,
) -> list[Point]:
    """Every assignment of ``[default, *test_models]`` to ``slots``, predicted or measured.

    The front and the most accurate point are chosen on the selection tasks
    and estimated on the held-out ones (module docstring); ``split=False``
    chooses and estimates on the same tasks (biased high; kept for the
    coverage test, which shows it fails).
    """
    table = CoalitionTable(slots, default, test_models).add(records)
    tasks = sorted(table.tasks)
    split = split and len(tasks) >= MIN_SPLIT
    choose, held = split_tasks(tasks) if split else (tasks, tasks)
    points = []
    for assignment in assignments(slots, [default, *test_models]):
        used = {m for m in assignment.values() if m != default}
        acc = table.terms(assignment, "acc")
        cost = table.terms(assignment, "cost")
        points.append(
            Point(
                assignment=assignment,
                acc={},
                cost={},
                measured=len(used) <= 1,
                models_used=len(used),
                acc_terms=acc,
                cost_terms=cost,
                selection={
                    "acc": acc.subset(choose).value() if split else acc.value(),
                    "cost_usd": cost.subset(choose).value() if split else cost.value(),
                    "tasks": len(choose),
                    "held_out": len(held) if split else 0,
                },
            )
        )
    figures = {
        i: (float(p.selection["acc"]), max(float(p.selection["cost_usd"]), 0.0))
        for i, p in enumerate(points)
        if p.selection["acc"] is not None and p.selection["cost_usd"] is not None
    }
    chosen = set(_nondominated(figures))
    for i in chosen:
        points[i].on_front = True
    if figures:
        best = max(figures, key=lambda i: (figures[i][0], -figures[i][1]))
        points[best].most_accurate = True
        chosen.add(best)
    for i, p in enumerate(points):
        if i in chosen:
            p.estimated_on = "held-out" if split else "same"
            if split and p.acc_terms is not None and p.cost_terms is not None:
                p.acc_terms = p.acc_terms.subset(held)
                p.cost_terms = p.cost_terms.subset(held)
        if p.acc_terms is not None and p.cost_terms is not None:
            p.acc = estimate(p.acc_terms, confidence, floor=0.0)
            p.cost = estimate(p.cost_terms, confidence, floor=0.0)
    return points


def promising(points: Sequence[Point], k: int) -> list[Point]:
    """The K assignments worth running: the front first, predictions before measured ones.

    Points on the predicted front are where a better agent for its price may
    be; those predicted (mixing test models) are the ones the coalition runs
    did not measure, so running them teaches the most. Beyond the front, the
    most accurate predicted points follow.
    """
    usable = [p for p in points if p.acc["mean"] is not None and p.cost["mean"] is not None]

    def rank(p: Point) -> tuple[int, int, float]:
        return (0 if p.on_front else 1, 1 if p.measured else 0, -p.acc["mean"])

    return sorted(usable, key=rank)[:k]


def cheapest_overlapping(points: Sequence[Point], which: str = "predicted") -> Point | None:
    """The cheapest assignment whose accuracy interval overlaps the most accurate one's.

    ``which`` = ``predicted`` looks at the front and the most accurate point
    that :func:`predict` chose (their held-out figures), ``measured`` at the
    assignments run for real (their ``run`` figures).
    """
    if which == "predicted":
        points = [p for p in points if p.on_front or p.most_accurate]

    def acc(p: Point) -> dict[str, Any] | None:
        return p.acc if which == "predicted" else (p.run or {}).get("acc")

    def cost(p: Point) -> float | None:
        src = p.cost if which == "predicted" else (p.run or {}).get("cost_usd")
        return None if src is None else src.get("mean")

    usable = [p for p in points if (acc(p) or {}).get("mean") is not None and cost(p) is not None]
    if not usable:
        return None
    chosen = [p for p in usable if p.most_accurate] if which == "predicted" else []
    best = chosen[0] if chosen else max(usable, key=lambda p: (acc(p) or {})["mean"])
    best_low = (acc(best) or {}).get("ci_low")
    if best_low is None:
        best_low = (acc(best) or {})["mean"]
    overlapping = [
        p for p in usable if ((acc(p) or {}).get("ci_high") or (acc(p) or {})["mean"]) >= best_low
    ]
    return min(overlapping, key=lambda p: (cost(p), -(acc(p) or {})["mean"]))


def compare(
    terms: Terms | None,
    measured: Mapping[str, float],
    predicted: Mapping[str, Any],
    *,
    confidence: float = 0.95,
    rate: bool = False,
) -> dict[str, Any]:
    """Measured against predicted on the same tasks.

    ``difference`` is measured minus predicted over the tasks both have, with
    a paired interval (the same bootstrap resamples of tasks for both; a t
    interval of the per-task differences when the prediction is itself a
    measurement); ``agrees``: the interval holds 0. ``within`` says whether
    the measured mean lies inside the predicted interval.

    For a ``rate`` (accuracy) the difference's interval is never narrower
    than the measured rate's own Wilson interval around it: when every
    held-out task succeeded (5 of 5 in a short run) the resamples of the
    measured side all read 1.0, and the smoothed prediction just under it
    would otherwise read as a disagreement.
    """
    meas = mean_interval(list(measured.values()), confidence)
    lo, hi = predicted.get("ci_low"), predicted.get("ci_high")
    within = None
    if lo is not None and hi is not None and meas["mean"] is not None:
        within = bool(lo - 1e-12 <= meas["mean"] <= hi + 1e-12)
    empty = {"n": 0, "mean": None, "se": None, "ci_low": None, "ci_high": None}
    if terms is None:
        return {"difference": empty, "within": within, "agrees": None}
    keep = [i for i, t in enumerate(terms.tasks) if t in measured]
    m = np.asarray([measured[terms.tasks[i]] for i in keep], dtype=np.float64)
    cols = terms.matrix[keep]
    n = len(keep)
    if n == 0:
        return {"difference": empty, "within": within, "agrees": None}
    if terms.single:
        diff = mean_interval(list(m - cols[:, 0]), confidence)
    else:
        value = float(m.mean() - terms.combine(cols.mean(axis=0)))
        diff = {"n": n, "mean": value, "se": None, "ci_low": None, "ci_high": None}
        if n >= 2:
            idx = resamples(n, seed=1)
            boot = m[idx].mean(axis=1) - terms.combine(cols[idx].mean(axis=1))
            a = (1.0 - confidence) / 2.0
            low, high = (float(x) for x in np.quantile(boot, [a, 1.0 - a]))
            diff.update(se=float(boot.std(ddof=1)), ci_low=low, ci_high=high)
    if rate and diff["ci_low"] is not None:
        mean = float(m.mean())
        w_low, w_high = wilson(mean, n, confidence)
        diff["ci_low"] = min(diff["ci_low"], diff["mean"] - (mean - w_low))
        diff["ci_high"] = max(diff["ci_high"], diff["mean"] + (w_high - mean))
    agrees = None
    if diff["ci_low"] is not None:
        agrees = bool(diff["ci_low"] - 1e-12 <= 0.0 <= diff["ci_high"] + 1e-12)
    elif diff["mean"] is not None:
        agrees = abs(diff["mean"]) < 1e-12
    return {"difference": diff, "within": within, "agrees": agrees}
