"""Comparisons across models and across attribution tables.

A *table* maps test model -> slot -> value (phi). Used for the paper's
ablation with two default models: do both defaults rank the test models the
same way for each slot (pairwise consistency rate), and how well do the two
tables agree overall (Pearson and Spearman correlation)?
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

import numpy as np
from scipy import stats

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


def best_combination(table: Table) -> dict[str, str]:
    """Per slot, the model with the highest value for it."""
    slots = sorted({s for row in table.values() for s in row})
    return {slot: max(table, key=lambda m: table[m].get(slot, -np.inf)) for slot in slots}


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
    return {
        "pearson": float(stats.pearsonr(xa, xb)[0]),
        "spearman": float(stats.spearmanr(xa, xb)[0]),
        "cells": float(len(xa)),
    }
