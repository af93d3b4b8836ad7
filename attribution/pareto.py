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

Intervals that survive the choice of the front. The front and the most
accurate point are picked on the same data the values come from, so the
picked points are the ones whose noise ran high (the winner's curse: on
tools a front point was predicted 0.10 above its truth), and per-point 95%
intervals covered 72-82% there. The predicted accuracies therefore get a
*simultaneous* interval over every predicted assignment: the bootstrap
max-t (the 95% quantile over resamples of the largest standardised
deviation of any predicted point, the resamples shared by all points), so
that all of them hold together with 95% probability and any selection among
them keeps its coverage. A prediction also never gets an interval narrower
than Wilson's for a rate measured on as many tasks (no point-intervals at
0/n or n/n), and the logit combination smooths each column's rate
(Jeffreys: (k + 1/2) / (n + 1)) instead of clipping it. Measured
accuracies (at most one test model) get Wilson intervals over tasks
(:mod:`attribution.rates`). Costs add without a logit, predicted cost is
unbiased, and its interval stays per point.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentbus.record import EpisodeRecord
from attribution.cost import mean_interval
from attribution.rates import rate_interval, wilson

#: above this many assignments the front is computed but only the front is listed
LIST_LIMIT = 4096


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
        }
        if self.run is not None:
            out["run"] = self.run
        return out


def label(assignment: Mapping[str, str], default: str) -> str:
    """``planning=sim:strong, action=sim:strong-action`` (slots on the default left out)."""
    moved = [f"{slot}={model}" for slot, model in assignment.items() if model != default]
    return ", ".join(moved) if moved else f"all {default}"


def _logit(p: np.ndarray, n: int) -> np.ndarray:
    """Logit of a rate over ``n`` tasks, Jeffreys-smoothed so 0/n and n/n stay finite."""
    q = (np.asarray(p) * n + 0.5) / (n + 1.0)
    return np.asarray(np.log(q / (1.0 - q)))


@dataclass
class Terms:
    """The per-task columns an assignment's value is combined from.

    Column 0 is the all-default agent (mean over the test models' empty
    coalitions); then, per test model used, its coalition S_m and its empty
    coalition. :meth:`combine` turns column means into the assignment's value.
    """

    tasks: list[str]
    matrix: np.ndarray  # tasks x (1 + 2 * groups)
    kind: str  # "acc" (combined on the logit scale) or "cost" (additive)
    single: bool  # one test model at most: the value is column 1 (or 0), measured

    def combine(self, means: np.ndarray) -> np.ndarray:
        """Value(s) from column means (shape (..., columns))."""
        if self.single:
            return np.asarray(means[..., -1] if means.shape[-1] > 1 else means[..., 0])
        if self.kind == "cost":
            gains = means[..., 1::2] - means[..., 2::2]
            return np.asarray(means[..., 0] + gains.sum(axis=-1))
        n = max(len(self.tasks), 1)
        z = _logit(means[..., 0], n) + (
            _logit(means[..., 1::2], n) - _logit(means[..., 2::2], n)
        ).sum(axis=-1)
        return np.asarray(1.0 / (1.0 + np.exp(-z)))


class CoalitionTable:
    """Per test model, per coalition key, per task: mean reward and mean agent cost."""

    def __init__(self, slots: Sequence[str], default: str, models: Sequence[str]) -> None:
        self.slots = tuple(slots)
        self.default = default
        self.models = tuple(models)
        self._reward: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        self._cost: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        self.tasks: set[str] = set()

    def add(self, records: Iterable[EpisodeRecord]) -> CoalitionTable:
        for r in records:
            if r.kind != "coalition" or r.test_model not in self.models:
                continue
            key = (r.test_model, r.coalition_key, r.task_id)
            self._reward[key].append(r.reward)
            cost = r.outcome.cost_usd
            if cost is not None:
                self._cost[key].append(cost)
            self.tasks.add(r.task_id)
        return self

    def value(self, kind: str, model: str, key: str, task: str) -> float | None:
        data = (self._reward if kind == "acc" else self._cost).get((model, key, task))
        return float(np.mean(data)) if data else None

    def key(self, members: Iterable[str]) -> str:
        chosen = set(members)
        return "+".join(s for s in self.slots if s in chosen)

    def terms(self, assignment: Mapping[str, str], kind: str) -> Terms:
        """The columns of ``assignment`` on every task where all of them were run."""
        groups: dict[str, list[str]] = defaultdict(list)
        for slot in self.slots:
            model = assignment[slot]
            if model != self.default:
                groups[model].append(slot)
        single = len(groups) <= 1
        tasks, rows = [], []
        for task in sorted(self.tasks):
            empties = [self.value(kind, m, "", task) for m in self.models]
            known = [e for e in empties if e is not None]
            if single:
                model, members = next(iter(groups.items()), (self.models[0], []))
                v = self.value(kind, model, self.key(members), task)
                row = [] if v is None else [v]
            else:
                row = [float(np.mean(known))] if known else []
                for model, members in groups.items():
                    v = self.value(kind, model, self.key(members), task)
                    e = self.value(kind, model, "", task)
                    if v is None or e is None or not row:
                        row = []
                        break
                    row += [v, e]
            if row:
                tasks.append(task)
                rows.append(row)
        width = 1 if single else 1 + 2 * len(groups)
        matrix = np.asarray(rows, dtype=np.float64).reshape(len(rows), width)
        return Terms(tasks, matrix, kind, single)


#: bootstrap resamples of the tasks behind every interval of this module
BOOTSTRAP = 2000


def _resamples(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(BOOTSTRAP, n))


def estimate(terms: Terms, confidence: float = 0.95, floor: float | None = None) -> dict[str, Any]:
    """Value with a bootstrap percentile interval over tasks (measured: Wilson, or t for cost).

    A predicted accuracy's interval is per point here; :func:`predict` makes
    the predicted accuracies' intervals simultaneous (see the module docstring).
    """
    n = len(terms.tasks)
    if n == 0:
        return {"n": 0, "mean": None, "se": None, "ci_low": None, "ci_high": None}
    if terms.single:
        if terms.kind == "acc":
            return wilson_row(list(terms.matrix[:, 0]), confidence)
        return mean_interval(list(terms.matrix[:, 0]), confidence, floor=floor)
    value = float(terms.combine(terms.matrix.mean(axis=0)))
    if floor is not None:
        # an additive prediction of a cost can come out a hair below zero; a cost cannot
        value = max(value, floor)
    if n < 2:
        return {"n": n, "mean": value, "se": None, "ci_low": None, "ci_high": None}
    boot = terms.combine(terms.matrix[_resamples(n)].mean(axis=1))
    a = (1.0 - confidence) / 2.0
    low, high = (float(x) for x in np.quantile(boot, [a, 1.0 - a]))
    if floor is not None:
        low, high = max(low, floor), max(high, floor)
    # the point stays inside its interval (a plot's error bars cannot be negative)
    low, high = min(low, value), max(high, value)
    if terms.kind == "acc":
        # no narrower than a rate measured on as many tasks (never a point at 0/n, n/n)
        w_low, w_high = wilson(value, n, confidence)
        low, high = min(low, w_low), max(high, w_high)
    return {"n": n, "mean": value, "se": float(boot.std(ddof=1)), "ci_low": low, "ci_high": high}


def wilson_row(values: Sequence[float], confidence: float) -> dict[str, Any]:
    """A measured accuracy over tasks (one value per task): mean, se, Wilson interval."""
    x = np.asarray(values, dtype=np.float64)
    row = rate_interval(x, None, confidence)
    se = float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else None
    return {
        "n": len(x),
        "mean": row["mean"],
        "se": se,
        "ci_low": row["ci_low"],
        "ci_high": row["ci_high"],
    }


def simultaneous(points: Sequence[Point], confidence: float = 0.95) -> float | None:
    """Widen every predicted accuracy's interval to hold for all of them at once.

    The bootstrap max-t: the resamples of tasks are shared by every
    assignment (same seed, same tasks), so the largest standardised deviation
    over the predicted points, per resample, estimates how far the worst of
    them strays; its ``confidence`` quantile ``q`` gives intervals
    ``value +/- q se`` (clipped to [0, 1], and never narrower than before)
    that hold together, hence also for whichever points the front selects.
    Returns ``q`` (None when fewer than two points are predicted).
    """
    preds = [
        p
        for p in points
        if not p.measured
        and p.acc_terms is not None
        and p.acc.get("se")
        and len(p.acc_terms.tasks) >= 2
    ]
    sizes = {len(p.acc_terms.tasks) for p in preds if p.acc_terms is not None}
    if len(preds) < 2 or len(sizes) != 1:
        return None
    n = sizes.pop()
    idx = _resamples(n)
    boot = np.stack(
        [p.acc_terms.combine(p.acc_terms.matrix[idx].mean(axis=1)) for p in preds if p.acc_terms]
    )
    values = np.array([p.acc["mean"] for p in preds])
    se = boot.std(axis=1, ddof=1)
    keep = se > 0
    if not np.any(keep):
        return None
    worst = np.max(np.abs(boot[keep] - values[keep, None]) / se[keep, None], axis=0)
    q = float(np.quantile(worst, confidence))
    for p, value, s in zip(preds, values, se, strict=True):
        low = max(float(value - q * s), 0.0)
        high = min(float(value + q * s), 1.0)
        p.acc["ci_low"] = min(p.acc["ci_low"], low)
        p.acc["ci_high"] = max(p.acc["ci_high"], high)
        p.acc["interval"] = f"simultaneous over {len(preds)} predictions (max-t {q:.2f})"
    return q


def _dominates(a: Point, b: Point) -> bool:
    """a is at least as accurate and as cheap as b, and better in one of the two."""
    aa, ac, ba, bc = a.acc["mean"], a.cost["mean"], b.acc["mean"], b.cost["mean"]
    return aa >= ba and ac <= bc and (aa > ba or ac < bc)


def front(points: Sequence[Point]) -> list[Point]:
    """The non-dominated points by point estimate, cheapest first."""
    usable = [p for p in points if p.acc["mean"] is not None and p.cost["mean"] is not None]
    order = sorted(usable, key=lambda p: (p.cost["mean"], -p.acc["mean"]))
    out: list[Point] = []
    best_acc = -np.inf
    for p in order:
        if p.acc["mean"] > best_acc:
            out.append(p)
            best_acc = p.acc["mean"]
    return out


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
) -> list[Point]:
    """Every assignment of ``[default, *test_models]`` to ``slots``, predicted or measured."""
    table = CoalitionTable(slots, default, test_models).add(records)
    points = []
    for assignment in assignments(slots, [default, *test_models]):
        used = {m for m in assignment.values() if m != default}
        acc = table.terms(assignment, "acc")
        cost = table.terms(assignment, "cost")
        points.append(
            Point(
                assignment=assignment,
                acc=estimate(acc, confidence, floor=0.0),
                cost=estimate(cost, confidence, floor=0.0),
                measured=len(used) <= 1,
                models_used=len(used),
                acc_terms=acc,
                cost_terms=cost,
            )
        )
    simultaneous(points, confidence)
    for p in front(points):
        p.on_front = True
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

    ``which`` = ``predicted`` ranks by the prediction, ``measured`` by the
    assignments run for real (their ``run`` figures).
    """

    def acc(p: Point) -> dict[str, Any] | None:
        return p.acc if which == "predicted" else (p.run or {}).get("acc")

    def cost(p: Point) -> float | None:
        src = p.cost if which == "predicted" else (p.run or {}).get("cost_usd")
        return None if src is None else src.get("mean")

    usable = [p for p in points if (acc(p) or {}).get("mean") is not None and cost(p) is not None]
    if not usable:
        return None
    best = max(usable, key=lambda p: (acc(p) or {})["mean"])
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
) -> dict[str, Any]:
    """Measured against predicted on the same tasks.

    ``difference`` is measured minus predicted over the tasks both have, with
    a paired interval (the same bootstrap resamples of tasks for both; a t
    interval of the per-task differences when the prediction is itself a
    measurement); ``agrees``: the interval holds 0. ``within`` says whether
    the measured mean lies inside the predicted interval.
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
            idx = _resamples(n, seed=1)
            boot = m[idx].mean(axis=1) - terms.combine(cols[idx].mean(axis=1))
            a = (1.0 - confidence) / 2.0
            low, high = (float(x) for x in np.quantile(boot, [a, 1.0 - a]))
            diff.update(se=float(boot.std(ddof=1)), ci_low=low, ci_high=high)
    agrees = None
    if diff["ci_low"] is not None:
        agrees = bool(diff["ci_low"] - 1e-12 <= 0.0 <= diff["ci_high"] + 1e-12)
    elif diff["mean"] is not None:
        agrees = abs(diff["mean"]) < 1e-12
    return {"difference": diff, "within": within, "agrees": agrees}
