"""The results file, its Markdown tables and the console table.

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

The Markdown follows the CapaBench paper's layout: one row per slot, then Acc
and delta Acc, one column per test model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text
from scipy import special

from agentbus.coalitions import coalition_label
from agentbus.outcome import AGENT_FAILURES
from attribution.allocation import within_task_correlation
from attribution.collect import Collector
from attribution.estimates import Estimates, NotEstimable
from attribution.estimators import Estimator
from attribution.exact import banzhaf_values, interaction_values, shapley_values
from attribution.game import Game
from attribution.multi import best_assignment, table_from_results
from attribution.rates import rate_interval
from attribution.sampling import StratifiedShapley
from attribution.variance import MIN_CLUSTERS

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


#: what ``ci_low``/``ci_high`` are (adaptive runs included: they stop on it, see
#: :meth:`attribution.service.AttributionService.done`); ``cs_*`` is the anytime-valid one
FIXED = "fixed-sample"
#: ``ci_low``/``ci_high`` when a run leads with the anytime-valid interval
ANYTIME = "anytime-valid"
#: the interval a run leads with when ``--stop RULE`` stops it on the data. At an
#: ``mvp`` or ``ranking`` stop the fixed-sample interval is not valid (stopping when
#: the top slot looks separated selects runs where it is high: its interval covered
#: 0.90, action's 0.80); the anytime-valid one holds at any stop. At a ``halfwidth``
#: stop (Chow-Robbins, 20 tasks or more) the fixed-sample one was measured to cover
#: at the stop (benchmarks/stop_coverage.py, docs/statistics.md).
STOP_INTERVAL = {"halfwidth": FIXED, "mvp": ANYTIME, "ranking": ANYTIME}


def lead_with_stop_interval(results: dict[str, Any], stop: str | None) -> dict[str, Any]:
    """Make ``ci_low``/``ci_high`` the interval valid at an adaptive ``stop`` (in place).

    Where that is the anytime-valid one, every index row's ``ci_*`` becomes
    its ``cs_*`` and the fixed-sample bounds move to ``fixed_low`` /
    ``fixed_high``; ``results["interval"]`` says which it is, so the
    console, results.md, the plots and the dashboard, which all read
    ``ci_*``, lead with it. ``stop`` None (not adaptive): unchanged.
    """
    if (
        stop is None
        or STOP_INTERVAL.get(stop, FIXED) == FIXED
        or results.get("interval") == ANYTIME
    ):
        return results
    for summary in (results.get("models") or {}).values():
        for index in ("shapley", "banzhaf", "interactions"):
            for row in (summary.get(index) or {}).values():
                if row.get("cs_low") is None:
                    continue
                row["fixed_low"], row["fixed_high"] = row["ci_low"], row["ci_high"]
                row["ci_low"], row["ci_high"] = row["cs_low"], row["cs_high"]
    results["interval"] = ANYTIME
    return results


def stop_interval_line(results: Mapping[str, Any]) -> str:
    """One console line after an adaptive stop: which interval the figures above are."""
    if results.get("interval") == ANYTIME:
        return (
            "intervals shown: anytime-valid (they hold at a stop chosen on the data; "
            "the fixed-sample ones, which do not, are fixed_low/fixed_high in results.json)"
        )
    return (
        "intervals shown: fixed-sample (measured to cover at a --stop halfwidth stop; "
        "the anytime-valid ones are cs_low/cs_high in results.json)"
    )


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


def given_up_line(results: Mapping[str, Any]) -> str | None:
    """One line on cells left out, by coalition (None when there are none)."""
    section = results.get("given_up")
    if not section or not section.get("cells"):
        return None
    parts = []
    for model, row in section["models"].items():
        worst = sorted(row["by_coalition"].items(), key=lambda kv: -kv[1])[:4]
        spread = ", ".join(f"{coalition_label(k)} {n}" for k, n in worst)
        more = " ..." if len(row["by_coalition"]) > 4 else ""
        parts.append(f"{model}: {row['cells']} ({spread}{more})")
    line = (
        f"cells given up after every attempt failed, left out of the means: {section['cells']}; "
        + "; ".join(parts)
    )
    if section.get("warning"):
        line += f". Warning: {section['warning']}"
    return line


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


def ordered_keys(slots: list[str], keys: Any) -> list[str]:
    """Coalition keys by size, then in slot order (the paper's Figure 3 order)."""
    index = {s: i for i, s in enumerate(slots)}

    def order(key: str) -> tuple[int, list[int]]:
        parts = [p for p in key.split("+") if p]
        return len(parts), [index.get(p, len(index)) for p in parts]

    return sorted(set(keys), key=order)


def _fmt(x: Any, digits: int = 3) -> str:
    return "-" if x is None else f"{float(x):.{digits}f}"


def _cell(row: Mapping[str, Any] | None) -> str:
    if not row or row.get("value") is None:
        return "n/a"
    return f"{_fmt(row['value'])} [{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]"


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _index_rows(results: Mapping[str, Any], index: str) -> list[list[str]]:
    models = list(results["models"])
    rows = []
    for slot in results["slots"]:
        rows.append(
            [slot] + [_cell((results["models"][m].get(index) or {}).get(slot)) for m in models]
        )
    # v(S) is named the same here and on the console (app/summary.py): the paper's
    # Acc of the all-default agent, its Acc with every slot on the test model, delta Acc
    rows.append(
        ["v(all default)"] + [_fmt(results["models"][m].get("acc_default")) for m in models]
    )
    rows.append(["v(all test)"] + [_fmt(results["models"][m].get("acc_test")) for m in models])
    rows.append(
        ["v(all test) - v(all default)"]
        + [_fmt(results["models"][m].get("delta_acc")) for m in models]
    )
    return rows


def _coalition_rows(results: Mapping[str, Any]) -> list[list[str]]:
    """One row per coalition (slots on the test model): success rate and episodes per model."""
    models = list(results["models"])
    keys = ordered_keys(
        list(results["slots"]),
        {k for m in models for k in results["models"][m].get("coalitions", {})},
    )
    rows = []
    for key in keys:
        row = [coalition_label(key)]
        for m in models:
            c = results["models"][m].get("coalitions", {}).get(key)
            row.append("-" if c is None else _rate_cell(c))
        rows.append(row)
    return rows


def _rate_cell(c: Mapping[str, Any]) -> str:
    """``0.567 [0.392, 0.728] (30 tasks)``; episodes named too when tasks repeat."""
    interval = (
        f" [{_fmt(c['ci_low'])}, {_fmt(c['ci_high'])}]" if c.get("ci_low") is not None else ""
    )
    tasks = c.get("tasks")
    if tasks is None:
        return f"{_fmt(c['mean'])} (n={c['n']})"
    units = f"{tasks} tasks" if tasks == c["n"] else f"{tasks} tasks, {c['n']} episodes"
    return f"{_fmt(c['mean'])}{interval} ({units})"


def has_variants(results: Mapping[str, Any]) -> bool:
    """Whether the run varied implementations (``--vary``), not only models."""
    return any(m.get("variants") for m in results["models"].values())


def _coalition_title(results: Mapping[str, Any]) -> str:
    side = "their test variant" if has_variants(results) else "the test model"
    conf = round(100 * float(results.get("confidence", 0.95)))
    if results.get("reward_kind") == "graded":  # rewards in [0, 1], not 0/1: v(S) is a mean
        return f"Mean reward per coalition (slots on {side}; {conf}% intervals over tasks)"
    return f"Success rate per coalition (slots on {side}; Wilson {conf}% intervals over tasks)"


def _variant_rows(results: Mapping[str, Any]) -> list[list[str]]:
    """slot, its default variant, its test variant per test model."""
    models = list(results["models"])
    rows = []
    for slot in results["slots"]:
        named = [(results["models"][m].get("variants") or {}).get(slot) or {} for m in models]
        default = next((n["default"] for n in named if n.get("default")), "-")
        rows.append([slot, default, *[n.get("test", "-") for n in named]])
    return rows


def _shift_rows(shift: Mapping[str, Any]) -> list[list[str]]:
    def units(r: Mapping[str, Any]) -> str:
        episodes = r.get("episodes")
        if episodes is not None and episodes != r["n"]:
            return f"{r['n']} ({episodes} episodes)"
        return str(r["n"])

    return [
        [
            str(r["variant"]),
            f"{_fmt(r['mean'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]",
            units(r),
        ]
        for r in shift["rows"]
    ]


def _shift_title(shift: Mapping[str, Any]) -> str:
    held = ", ".join(f"{s} on {v}" for s, v in shift["held"].items()) or "nothing held"
    return f"{shift['slot'].capitalize()}-shift: pass rate per {shift['slot']} variant ({held})"


def _agent_rows(results: Mapping[str, Any]) -> list[list[str]]:
    """Accuracy of whole agents: all-default, each model on every slot, best combination."""
    models = results["models"]
    rows: list[list[str]] = []
    if models:
        first = next(iter(models.values()))
        rows.append(
            [f"all {results.get('default_model') or 'default'}", _fmt(first.get("acc_default"))]
        )
    rows.extend([f"all {m}", _fmt(s.get("acc_test"))] for m, s in models.items())
    best = results.get("best_run")
    if best:
        picks = ", ".join(
            f"{slot}={model}" for slot, model in (best.get("assignment") or {}).items()
        )
        interval = (
            f" [{_fmt(best['ci_low'])}, {_fmt(best['ci_high'])}]"
            if best.get("ci_low") is not None
            else ""
        )
        rows.append(
            [
                f"best combination ({picks}), on the tasks it was chosen on (optimistic)",
                f"{_fmt(best.get('acc'))}{interval} (n={best.get('n')} tasks)",
            ]
        )
    return rows


def _interval_note(results: Mapping[str, Any]) -> str:
    adaptive = results.get("adaptive")
    if not isinstance(adaptive, Mapping):
        return ""
    if results.get("interval") == ANYTIME:
        return (
            f" The run was adaptive and stopped on the data ({adaptive.get('stop_reason')}):"
            " the intervals shown are the anytime-valid ones, which hold at a stop chosen"
            " by looking at the data; the fixed-sample ones, which do not, are in"
            " results.json as `fixed_low`, `fixed_high`."
        )
    return (
        " The run was adaptive: it stopped the first time every interval was narrower"
        f" than +/-{adaptive.get('target_halfwidth')} with at least {MIN_CLUSTERS} tasks in"
        " (the Chow-Robbins rule; the fixed-sample intervals shown were measured to cover"
        " at such a stop, see docs/statistics.md); results.json also gives the wider"
        " anytime-valid interval (`cs_low`, `cs_high`), valid under any stopping rule."
    )


# -- failure kinds: a user's agent's own failures, named apart from wrong answers ------


def _kinds_text(by_kind: Mapping[str, int]) -> str:
    return ", ".join(f"{AGENT_FAILURES.get(k, k)} {n}" for k, n in by_kind.items())


def _one_line(text: Any, width: int = 160) -> str:
    """A reason fit for a table cell: one line, no pipes, at most ``width`` characters."""
    flat = " ".join(str(text or "").split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def agent_failure_line(results: Mapping[str, Any]) -> str | None:
    """One line: how many counted episodes were the agent's own failures, by kind."""
    failures = results.get("agent_failures")
    if not isinstance(failures, Mapping) or not failures.get("failed"):
        return None
    line = (
        f"agent failures (counted as the agent's zeros in v(S)): {failures['failed']} of "
        f"{failures['episodes']} episodes: {_kinds_text(failures['by_kind'])}"
    )
    if failures.get("saturated"):
        line += (
            f"; {failures['saturated']} of the time-outs came while the machine was saturated "
            f"({failures.get('load')}): run fewer agents at once (--agent-processes) or raise "
            "--agent-timeout"
        )
    return line


def agent_failure_markdown(results: Mapping[str, Any]) -> str | None:
    """The results.md section: failures per kind (with a first reason) and per coalition."""
    line = agent_failure_line(results)
    if line is None:
        return None
    failures = results["agent_failures"]
    kinds = list(failures["by_kind"])
    per_kind = _md_table(
        ["kind", "episodes", "first reason"],
        [
            [f"`{k}` ({AGENT_FAILURES.get(k, k)})", str(n), _one_line(failures["reasons"].get(k))]
            for k, n in failures["by_kind"].items()
        ],
    )
    by_coalition = failures["by_coalition"]
    keys = ordered_keys(list(results.get("slots") or []), list(by_coalition))
    per_coalition = _md_table(
        ["coalition", *kinds],
        [
            [k or "(all default)", *(str(by_coalition[k].get(kind, 0)) for kind in kinds)]
            for k in keys
        ],
    )
    return (
        f"## Agent failures\n\n{line[0].upper() + line[1:]}. Each is a reward of 0 in its "
        "coalition's v(S): the agent's behaviour, not the machine's.\n\n"
        f"{per_kind}\n\nPer coalition:\n\n{per_coalition}"
    )


def to_markdown(results: Mapping[str, Any]) -> str:
    """The paper's tables (Shapley, Banzhaf), coalition rates and the best combination."""
    models = list(results["models"])
    conf = round(100 * float(results.get("confidence", 0.95)))
    default = results.get("default_model") or "default"
    parts = [
        f"# Attribution results\n\nDefault model: `{default}`. Cells: value [{conf}%"
        f"{' anytime-valid' if results.get('interval') == ANYTIME else ''} interval]."
        + _interval_note(results)
    ]
    shift = results.get("shift")
    if shift:
        parts.append(
            f"## {_shift_title(shift)}\n\n"
            + _md_table([shift["slot"], "pass rate", "tasks"], _shift_rows(shift))
        )
    if has_variants(results):
        parts.append(
            "## Variants (what each varied slot runs on each side)\n\n"
            + _md_table(["slot", "default", *models], _variant_rows(results))
        )
    sampled = sorted(
        {str(s["estimator"]) for s in results["models"].values() if s.get("estimator")}
    )
    how = (
        f"Estimated with `{', '.join(sampled)}`: coalitions drawn per task, 95% interval over "
        "tasks (docs/statistics.md); Banzhaf values need every coalition.\n\n"
        if sampled
        else ""
    )
    parts.append(
        "## Shapley values\n\n"
        + how
        + _md_table(["slot", *models], _index_rows(results, "shapley"))
    )
    parts.append(
        "## Banzhaf values\n\n" + _md_table(["slot", *models], _index_rows(results, "banzhaf"))
    )
    acc_default = [_fmt(results["models"][m].get("acc_default")) for m in models]
    notes = []
    for m in models:
        s = results["models"][m]
        line = (
            f"- `{m}`: {s.get('episodes', 0)} episodes, {s.get('failures', 0)} infrastructure "
            f"failures (not counted), SE {s.get('se_method') or 'n/a'}, v(all default) "
            f"{acc_default[models.index(m)]}"
        )
        if s.get("not_estimable"):
            line += f"; {s['not_estimable']}"
        notes.append(line)
    parts.append("\n".join(notes))
    gave_up = given_up_line(results)
    if gave_up:
        parts.append(gave_up)
    rows = _coalition_rows(results)
    parts.append(f"## {_coalition_title(results)}\n\n" + _md_table(["coalition", *models], rows))
    failed = agent_failure_markdown(results)
    if failed:
        parts.append(failed)
    if results.get("best_run"):
        parts.append("## Whole agents\n\n" + _md_table(["agent", "Acc"], _agent_rows(results)))
    best = results.get("best")
    if best and best.get("slots"):
        parts.append(
            "## Best combination\n\n"
            + _md_table(["slot", "model"], [[s, f"`{m}`"] for s, m in best["slots"].items()])
        )
    return "\n\n".join(parts) + "\n"


def render_console(results: Mapping[str, Any]) -> Group:
    """A rich renderable: the Shapley/Banzhaf table in the paper's layout."""
    models = list(results["models"])
    conf = round(100 * float(results.get("confidence", 0.95)))
    tables = []
    if has_variants(results):
        named = Table(title="Variants (what each varied slot runs on each side)")
        for column in ("slot", "default", *models):
            named.add_column(column)
        for row in _variant_rows(results):
            named.add_row(*row)
        tables.append(named)
    coalitions = Table(title=_coalition_title(results))
    coalitions.add_column("coalition", style="bold")
    for m in models:
        coalitions.add_column(m, justify="right")
    for row in _coalition_rows(results):
        coalitions.add_row(*row)
    tables.append(coalitions)
    for index in ("shapley", "banzhaf"):
        table = Table(title=f"{index.capitalize()} values ({conf}% intervals)")
        table.add_column("slot", style="bold")
        for m in models:
            table.add_column(m, justify="right")
        for row in _index_rows(results, index):
            table.add_row(*row)
        tables.append(table)
    shift = results.get("shift")
    if shift:
        shifted = Table(title=_shift_title(shift))
        shifted.add_column(shift["slot"], style="bold")
        shifted.add_column("pass rate", justify="right")
        shifted.add_column("tasks", justify="right")
        for row in _shift_rows(shift):
            shifted.add_row(*row)
        tables.append(shifted)
    if results.get("best_run"):
        agents = Table(title="Whole agents")
        agents.add_column("agent", style="bold")
        agents.add_column("Acc", justify="right")
        for row in _agent_rows(results):
            agents.add_row(*row)
        tables.append(agents)
    extra = []
    for m in models:
        reason = results["models"][m].get("not_estimable")
        if reason:
            extra.append(Text(f"{m}: {reason}", style="yellow"))
    gave_up = given_up_line(results)
    if gave_up:
        extra.append(Text(gave_up, style="yellow"))
    return Group(*tables, *extra)
