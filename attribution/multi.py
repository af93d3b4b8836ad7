"""Comparisons across models and across attribution tables.

A *table* maps test model -> slot -> value (phi). Used for the paper's
ablation with two default models: do both defaults rank the test models the
same way for each slot (pairwise consistency rate), and how well do the two
tables agree overall (Pearson and Spearman correlation)?
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

Table = Mapping[str, Mapping[str, float]]


def table_from_results(
    results: Mapping[str, Any], index: str = "shapley"
) -> dict[str, dict[str, float]]:
    """Extract model -> slot -> value from a results dict (estimable models only)."""
    out: dict[str, dict[str, float]] = {}
    for model, summary in results["models"].items():
        rows = summary.get(index)
        if rows:
            out[model] = {slot: float(row["value"]) for slot, row in rows.items()}
    return out


def best_assignment(table: Table, slots: Sequence[str], default_model: str) -> dict[str, str]:
    """The best-combination agent: per slot, the model to put there.

    The one rule used by ``--best`` and by results files: a slot goes to the
    test model with the highest Shapley value for it when that value is
    positive, and stays on the default model otherwise. phi_i of a test model
    is what moving slot i from the default to that model adds, so a slot
    where every test model has phi <= 0 gains nothing from any of them.
    """
    best: dict[str, str] = {}
    for slot in slots:
        top, choice = 0.0, default_model
        for model in sorted(table):
            value = table[model].get(slot)
            if value is not None and np.isfinite(value) and value > top:
                top, choice = float(value), model
        best[slot] = choice
    return best


def _shared(a: Table, b: Table) -> tuple[list[str], list[str]]:
    models = sorted(set(a) & set(b))
    slots = sorted({s for m in models for s in a[m]} & {s for m in models for s in b[m]})
    return models, slots


def consistency_rate(a: Table, b: Table) -> float:
    """Share of (slot, model pair) comparisons ordered the same way by both tables.

    For every slot and every pair of test models, both tables must agree on
    which model has the larger value (ties in either table count as
    disagreement unless tied in both). NaN when fewer than two shared models.
    """
    models, slots = _shared(a, b)
    agree = total = 0
    for slot in slots:
        for m1, m2 in combinations(models, 2):
            da = np.sign(a[m1][slot] - a[m2][slot])
            db = np.sign(b[m1][slot] - b[m2][slot])
            total += 1
            agree += int(da == db)
    return agree / total if total else float("nan")


def table_correlation(a: Table, b: Table) -> dict[str, float]:
    """Pearson and Spearman correlation over the shared (model, slot) cells."""
    models, slots = _shared(a, b)
    xa = np.array([a[m][s] for m in models for s in slots])
    xb = np.array([b[m][s] for m in models for s in slots])
    if len(xa) < 3 or np.std(xa) == 0 or np.std(xb) == 0:
        return {"pearson": float("nan"), "spearman": float("nan"), "cells": float(len(xa))}
    from scipy import stats  # here: importing scipy.stats costs every process ~0.6 s

    return {
        "pearson": float(stats.pearsonr(xa, xb)[0]),
        "spearman": float(stats.spearmanr(xa, xb)[0]),
        "cells": float(len(xa)),
    }
