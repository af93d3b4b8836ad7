"""The results file: the figures of ``results.json``, built from the collected games.

``results.json`` (see issue 4)::

    {"slots": [...], "default_model": "sim:weak", "confidence": 0.95,
     "models": {TEST_MODEL: {
         "coalitions": {KEY: {"n": int, "mean": float,      # KEY: slots on test, '+'-joined
                              "tasks": int, "ci_low": float, "ci_high": float}},  # Wilson
         "shapley": {SLOT: {"value", "ci_low", "ci_high", "se", "cs_low", "cs_high",
                            "rank_low", "rank_high"}} | null,
         "banzhaf": {...} | null, "interactions": {"a*b": {...}} | null,
         "se_method": "independent" | "paired" | "covariance", "within_task_rho": float | null,
         "acc_default": float | null, "acc_test": float | null, "delta_acc": float | null,
         "episodes": int, "failures": int, "not_estimable": str | null}},
     "best": {"slots": {SLOT: TEST_MODEL}} | null,
     "given_up": {"cells": int, "models": {MODEL: {"cells", "by_coalition", "p_even"}},
                  "uneven": bool, "warning": str | null}}

A run that varies implementations (``--vary``, docs/variants.md) adds, per
test model, ``"variants": {SLOT: {"default": LABEL, "test": LABEL}}`` (LABEL
``off`` or ``MODULE@MODEL``), and with ``shift`` a top-level
``"shift": {"slot", "held": {SLOT: LABEL}, "rows": [{"variant", "model", "mean",
"n", "episodes", "n_eff", "ci_low", "ci_high", "interval"}]}``: MMAU's pass rate
per variant of one slot with every other varied slot on its test side (``n``:
tasks; the interval is Wilson's, task-clustered over repeats, see
:mod:`attribution.rates`).

Its Markdown tables and console table are in :mod:`attribution.tables`, the
interval a run leads with at an adaptive stop in :mod:`attribution.stop_interval`
(import them from there: a split file moves its callers, it does not re-export).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from attribution.allocation import within_task_correlation
from attribution.collect import Collector
from attribution.estimates import Estimates, NotEstimable
from attribution.estimators import Estimator
from attribution.exact import banzhaf_values, interaction_values, shapley_values
from attribution.game import Game
from attribution.multi import best_assignment, table_from_results
from attribution.rates import rate_interval
from attribution.sampling import StratifiedShapley

# what moved keeps its old import path here
from attribution.stop_interval import FIXED

Results = dict[str, Any]

#: above this many slots, exact values give way to the size-stratified estimator
EXACT_MAX_SLOTS = 10


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def _cell_value(x: Any) -> Any:
    return x if isinstance(x, int) else _num(x)


def _table(est: Estimates) -> dict[str, dict[str, Any]]:
    return {
        k: {kk: _cell_value(vv) for kk, vv in v.items()} for k, v in est.to_dict()["slots"].items()
    }


def model_summary(
    game: Game,
    *,
    confidence: float = 0.95,
    failures: int = 0,
    horizon: float | None = None,
    interactions: bool = True,
    estimator: str = "exact",
) -> dict[str, Any]:
    """Everything the results file says about one test model's game.

    ``estimator`` (``--estimator``, :mod:`attribution.estimators`): ``exact``
    (the default) plays every coalition; a per-task sampled one reports its
    Shapley estimate with the interval over tasks, and no Banzhaf or
    interaction tables (they need every coalition).
    """
    return _model_summary(
        game,
        confidence=confidence,
        failures=failures,
        horizon=horizon,
        interactions=interactions,
        estimator=estimator,
    )


def _model_summary(
    game: Game,
    *,
    confidence: float,
    failures: int,
    horizon: float | None,
    interactions: bool,
    estimator: str = "exact",
) -> dict[str, Any]:
    means = game.means
    counts = game.counts
    coalitions = {
        game.key(m): {"n": int(counts[m]), "mean": _num(float(means[m]))}
        for m in range(game.size)
        if counts[m] > 0
    }
    if game.n <= EXACT_MAX_SLOTS:
        # each coalition's pass rate with its Wilson interval over tasks (attribution.rates)
        for key, row in coalitions.items():
            rate = _rate(game, game.mask_of_key(key), confidence)
            row.update(tasks=rate["n"], ci_low=rate["ci_low"], ci_high=rate["ci_high"])
    out: dict[str, Any] = {
        "coalitions": coalitions,
        "shapley": None,
        "banzhaf": None,
        "interactions": None,
        "se_method": None,
        # a correlation within tasks needs two tasks at least (n/a, not 0, with one)
        "within_task_rho": _num(within_task_correlation(game)) if game.n_tasks >= 2 else None,
        "acc_default": _num(float(means[0])),
        "acc_test": _num(float(means[game.full])),
        "delta_acc": _num(float(means[game.full] - means[0])),
        "episodes": game.episodes,
        "failures": failures,
        "not_estimable": None,
    }
    sampled = Estimator.make(estimator, game.n)
    if sampled.name != "exact":
        out["estimator"] = sampled.name
        try:
            est = sampled.estimate(game, confidence=confidence, horizon=horizon)
        except NotEstimable as exc:
            out["not_estimable"] = str(exc)
            return out
        out["shapley"] = _table(est)
        out["se_method"] = est.method
        if est.kind == "loo":
            out["index"] = "loo: the Shapley value when no interaction involves 3+ slots"
        return out
    if game.n > EXACT_MAX_SLOTS:
        strat = StratifiedShapley(game.slots)
        _, masks, rewards = game.observations()
        strat.add_many(masks, rewards)
        try:
            est = strat.estimates(confidence, horizon)
        except NotEstimable as exc:
            out["not_estimable"] = str(exc)
            return out
        out["shapley"] = _table(est)
        out["se_method"] = est.method
        return out
    try:
        shap = shapley_values(game, confidence=confidence, horizon=horizon)
    except NotEstimable as exc:
        out["not_estimable"] = str(exc)
        return out
    out["shapley"] = _table(shap)
    out["se_method"] = shap.method
    out["banzhaf"] = _table(banzhaf_values(game, confidence=confidence, horizon=horizon))
    if interactions and game.n >= 2:
        inter = interaction_values(game, confidence=confidence, horizon=horizon)
        out["interactions"] = {
            label: {k: v for k, v in row.items() if not k.startswith("rank")}
            for label, row in _table(inter).items()
        }
    return out


def best_combination(results: Mapping[str, Any]) -> dict[str, str] | None:
    """The best-combination assignment (:func:`attribution.multi.best_assignment`).

    None while no test model has an estimate, since nothing can be chosen then.
    """
    table = table_from_results(results)
    if not table:
        return None
    return best_assignment(table, results["slots"], str(results.get("default_model")))


def build_results(
    source: Collector | Mapping[str, Game],
    *,
    default_model: str | None = None,
    failures: Mapping[str, int] | None = None,
    confidence: float = 0.95,
    horizon: float | None = None,
    shift: str | None = None,
    estimator: str = "exact",
) -> Results:
    """The results-file content for every test model.

    ``source`` is a :class:`Collector` (the live service's, or one replayed from
    a log) or a mapping test model -> :class:`Game`; with a mapping, pass the
    ``default_model`` and the infrastructure ``failures`` per model yourself.
    """
    failure_summary: dict[str, Any] | None = None
    variants: Mapping[str, Any] = {}
    if isinstance(source, Collector):
        failure_summary = source.book.failure_summary()
        variants = source.variants
        games: Mapping[str, Game] = source.games
        fails = dict(source.failures)
        default = source.default_model if default_model is None else default_model
        slots = list(source.slots or ())
    else:
        games = source
        fails = dict(failures or {})
        default = default_model
        slots = list(next(iter(games.values())).slots) if games else []
    models = {
        model: model_summary(
            game,
            confidence=confidence,
            failures=fails.get(model, 0),
            horizon=horizon,
            estimator=estimator,
        )
        for model, game in sorted(games.items())
    }
    for model, count in fails.items():
        if model not in models:
            models[model] = {"coalitions": {}, "shapley": None, "failures": count}
    for model, named in variants.items():
        if model in models:
            models[model]["variants"] = named
    results: Results = {
        "slots": slots,
        "default_model": default,
        "confidence": confidence,
        "interval": FIXED,
        "models": models,
        "best": None,
    }
    # a model per slot is only a choice when the slots vary by model; with --vary a
    # side may be another module, a fixed model or off, so there is nothing to pick
    best = None if variants else best_combination(results)
    results["best"] = {"slots": best} if best else None
    if failure_summary is not None:
        results["failures"] = failure_summary
    if isinstance(source, Collector):
        results["given_up"] = given_up(source.uncounted(), slots)
    if shift is not None and shift in slots:
        results["shift"] = shift_table(games, slots, shift, default, variants, confidence)
    return results


def given_up(uncounted: Mapping[str, Mapping[str, int]], slots: list[str]) -> dict[str, Any]:
    """Cells left out because every attempt failed, by test model and coalition.

    They are missing from the coalition means (a coalition's ``n`` is smaller
    by them), and which cells give up is not random: longer episodes meet more
    faults, and episode length depends on the coalition. So they are listed
    per coalition, and ``uneven`` is set when their spread over the
    2^n coalitions of a model is unlikely under an even spread (chi-square
    goodness of fit against equal counts, p < 0.05; every coalition was
    scheduled on the same tasks, so equal is what chance alone gives).
    """
    size = 1 << len(slots)
    models: dict[str, Any] = {}
    total = 0
    uneven: list[str] = []
    for model, by_key in sorted(uncounted.items()):
        cells = int(sum(by_key.values()))
        if cells == 0:
            continue
        total += cells
        counts = np.zeros(size)
        counts[: len(by_key)] = sorted(by_key.values(), reverse=True)
        expected = cells / size
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        p = float(special.chdtrc(size - 1, chi2)) if size > 1 else 1.0
        models[model] = {
            "cells": cells,
            "by_coalition": dict(sorted(by_key.items())),
            "p_even": p,
        }
        if p < 0.05:
            uneven.append(model)
    warning = None
    if uneven:
        warning = (
            "cells given up are unevenly spread over coalitions for "
            + ", ".join(uneven)
            + " (p < 0.05): the coalitions with more of them lose more tasks, and which tasks"
            " give up is not random (long episodes meet more faults); their means may be biased"
        )
    return {"cells": total, "models": models, "uneven": bool(uneven), "warning": warning}


def _rate(game: Game, mask: int, confidence: float) -> dict[str, Any]:
    """Pass rate of one coalition: Wilson interval, task-clustered over repeats.

    ``n`` is the number of tasks (the units of the interval), ``episodes`` the
    number of episodes behind it (larger with ``--repeats``); see
    :mod:`attribution.rates`.
    """
    tasks, masks, rewards = game.observations()
    keep = masks == mask
    row = rate_interval(rewards[keep], tasks[keep], confidence)
    return {
        "mean": row["mean"],
        "n": row["tasks"],
        "episodes": row["episodes"],
        "n_eff": row["n_eff"],
        "ci_low": row["ci_low"],
        "ci_high": row["ci_high"],
        "interval": row["interval"],
    }


def shift_table(
    games: Mapping[str, Game],
    slots: list[str],
    slot: str,
    default_model: str | None,
    variants: Mapping[str, Any],
    confidence: float = 0.95,
) -> dict[str, Any]:
    """MMAU's planner-shift / solver-shift table: pass rate per variant of ``slot``.

    Every other varied slot stays on its test side (the held stage), so the
    rows are the coalition "all slots but ``slot``" (``slot`` on its default
    variant, once) and the full coalition of each test column (``slot`` on
    that column's variant).
    """
    rows: list[dict[str, Any]] = []
    held: dict[str, str] = {}
    for k, (model, game) in enumerate(sorted(games.items())):
        named = variants.get(model) or {}
        others = [s for s in slots if s != slot]
        held = {s: (named.get(s) or {}).get("test", model) for s in others}
        if k == 0:
            label = (named.get(slot) or {}).get("default", default_model or "default")
            rows.append(
                {
                    "variant": label,
                    "model": default_model,
                    **_rate(game, game.mask(others), confidence),
                }
            )
        label = (named.get(slot) or {}).get("test", model)
        rows.append({"variant": label, "model": model, **_rate(game, game.full, confidence)})
    return {"slot": slot, "held": held, "rows": rows}


# -- presentation -------------------------------------------------------------
