"""The per-task columns an assignment's accuracy or cost is combined from, and its interval.

:class:`CoalitionTable` holds the coalition runs' mean reward and cost per
test model, coalition and task; :class:`Terms` are the columns one assignment
needs and combines them (on the logit scale for accuracy, additively for
cost); :func:`estimate` gives a value its bootstrap interval over tasks (the
same resamples for every column, so their pairing by task is kept).
:mod:`attribution.pareto` builds the front from these.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentbus.core.record import EpisodeRecord
from attribution.cost import mean_interval
from attribution.rates import rate_interval, wilson


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

    def subset(self, tasks: Iterable[str]) -> Terms:
        """The same columns on ``tasks`` only (those of them this one has)."""
        keep = set(tasks)
        rows = [i for i, t in enumerate(self.tasks) if t in keep]
        return Terms([self.tasks[i] for i in rows], self.matrix[rows], self.kind, self.single)

    def value(self) -> float | None:
        """The point value over this one's tasks (None without tasks)."""
        if not self.tasks:
            return None
        return float(self.combine(self.matrix.mean(axis=0)))

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
        return sum(data) / len(data) if data else None

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
        keys = {model: self.key(members) for model, members in groups.items()}
        tasks, rows = [], []
        for task in sorted(self.tasks):
            if single:
                model, key = next(iter(keys.items()), (self.models[0], ""))
                v = self.value(kind, model, key, task)
                row = [] if v is None else [v]
            else:
                empties = [self.value(kind, m, "", task) for m in self.models]
                known = [e for e in empties if e is not None]
                row = [sum(known) / len(known)] if known else []
                for model, key in keys.items():
                    v = self.value(kind, model, key, task)
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


@functools.lru_cache(maxsize=64)
def resamples(n: int, seed: int = 0) -> np.ndarray:
    """``BOOTSTRAP`` seeded resamples of ``n`` task indices, shared by every interval."""
    idx = np.random.default_rng(seed).integers(0, n, size=(BOOTSTRAP, n))
    idx.flags.writeable = False
    return idx


@functools.lru_cache(maxsize=64)
def _weights(n: int, seed: int = 0) -> np.ndarray:
    """The resamples as weights (resamples x tasks): ``weights @ matrix`` = resampled means."""
    idx = resamples(n, seed)
    w = np.zeros((BOOTSTRAP, n))
    np.add.at(w, (np.arange(BOOTSTRAP)[:, None], idx), 1.0 / n)
    w.flags.writeable = False
    return w


def estimate(terms: Terms, confidence: float = 0.95, floor: float | None = None) -> dict[str, Any]:
    """Value with a bootstrap percentile interval over tasks (measured: Wilson, or t for cost).

    Per point: :func:`attribution.pareto.predict` calls it on held-out tasks for the points the
    front chose, so the choice does not bias it (see the module docstring).
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
    boot = terms.combine(_weights(n) @ terms.matrix)
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
    """A measured accuracy over tasks (one value per task): mean, se, modified Wilson interval.

    The interval is :func:`attribution.rates.rate_interval`'s: Wilson with
    Brown, Cai and DasGupta's bound at one to three successes (or failures),
    which the tools front needs (the all-default agent is right on under 1%
    of tasks, and plain Wilson covered its measured front points 0.92).
    """
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
