"""What the agent costs: per coalition, per slot, for the run, and the Shapley value of cost.

Every record carries its slots' tokens and USD (see
:class:`agentbus.core.outcome.SlotUsage`). Two figures come out of them:

* the *agent cost* of an episode: every call its modules made, also those the
  run's cache answered because another coalition made them first. It is what
  this assignment of models would cost on its own, so it is the figure per
  coalition, per slot and in the Pareto front;
* the *billed cost*: only calls that went upstream. It is what the run cost,
  the figure budgets and the run's total use.

Cost is another value function over the same coalition game: v_cost(S) is
the mean agent cost of coalition S, so the Shapley value of cost (with
intervals, paired by task like the reward's) says how much putting each slot
on the test model adds to the cost of an episode.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from rich.console import Group
from rich.text import Text
from scipy import special

from agentbus.core.coalitions import coalition_label
from agentbus.core.record import EpisodeRecord
from attribution.estimates import Estimates, NotEstimable
from attribution.exact import banzhaf_values, shapley_values
from attribution.game import Game
from attribution.tables import keyed_table


def usd(x: Any, digits: int = 4) -> str:
    """A dollar figure readable at any scale ($12.34, $0.0123, $1.23e-05)."""
    if x is None:
        return "-"
    value = float(x)
    if value == 0:
        return "$0"
    if value < 0:
        return "-" + usd(-value, digits)
    if abs(value) >= 1:
        return f"${value:,.2f}"
    return f"${value:.{digits}g}" if abs(value) >= 1e-4 else f"${value:.2e}"


def mean_interval(
    values: Sequence[float],
    confidence: float = 0.95,
    *,
    floor: float | None = None,
    ceiling: float | None = None,
) -> dict[str, Any]:
    """Mean with a t interval over independent units (tasks), clipped to [floor, ceiling]."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n == 0:
        return {"n": 0, "mean": None, "se": None, "ci_low": None, "ci_high": None}
    mean = float(x.mean())
    if n < 2:
        return {"n": n, "mean": mean, "se": None, "ci_low": None, "ci_high": None}
    se = float(x.std(ddof=1) / np.sqrt(n))
    q = float(special.stdtrit(n - 1, 0.5 + confidence / 2.0))
    low = mean - q * se if floor is None else max(mean - q * se, floor)
    high = mean + q * se if ceiling is None else min(mean + q * se, ceiling)
    return {"n": n, "mean": mean, "se": se, "ci_low": low, "ci_high": high}


def _tokens(records: Sequence[EpisodeRecord]) -> dict[str, float]:
    n = max(len(records), 1)
    total: dict[str, float] = defaultdict(float)
    for r in records:
        for u in r.outcome.usage.values():
            total["input_tokens"] += u.input_tokens
            total["cached_input_tokens"] += u.cached_input_tokens
            total["output_tokens"] += u.output_tokens
    return {k: v / n for k, v in total.items()}


def _per_task(records: Iterable[EpisodeRecord]) -> dict[str, float]:
    """Mean agent cost per task (repeats averaged; the task is the unit)."""
    by_task: dict[str, list[float]] = defaultdict(list)
    for r in records:
        cost = r.outcome.cost_usd
        if cost is not None:
            by_task[r.task_id].append(cost)
    return {t: float(np.mean(v)) for t, v in by_task.items()}


def _index(est: Estimates, *, spread: bool = True) -> dict[str, dict[str, float | None]]:
    """Per slot value and interval; without ``spread`` (one task) the interval is None."""
    out: dict[str, dict[str, float | None]] = {}
    for s in est:
        row = s.to_dict()
        out[s.slot] = {
            k: (float(v) if np.isfinite(v) and (spread or k == "value") else None)
            for k, v in row.items()
        }
    return out


def cost_game(records: Iterable[EpisodeRecord], slots: Sequence[str]) -> Game | None:
    """The cost game of one test model (None when some record is unpriced).

    Cost is not a reward in [0, 1], so the game has no Bernoulli floor
    (``unit_interval=False``): its intervals are the task-paired ones alone.
    """
    game = Game(slots, unit_interval=False)
    for r in records:
        cost = r.outcome.cost_usd
        if cost is None:
            return None
        game.add(r.coalition, r.task_id, cost)
    return game


def cost_summary(
    counted: Iterable[EpisodeRecord],
    slots: Sequence[str],
    *,
    default_model: str | None,
    billed: Mapping[str, float] | None = None,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The ``cost`` section of results.json.

    ``counted`` are the counting records (one per cell; coalition records make
    the tables), ``billed`` the run's spend over every attempt (see
    :class:`agentbus.app.budget.Spend`).
    """
    coalition = [r for r in counted if r.kind == "coalition" and r.test_model]
    by_model: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for r in coalition:
        by_model[r.test_model or ""].append(r)
    unpriced = sorted(
        {u.model for r in coalition for u in r.outcome.usage.values() if u.cost_usd is None}
    )
    models: dict[str, Any] = {}
    for model, records in sorted(by_model.items()):
        groups: dict[str, list[EpisodeRecord]] = defaultdict(list)
        for r in records:
            groups[r.coalition_key].append(r)
        coalitions = {}
        for key, group in groups.items():
            row = mean_interval(list(_per_task(group).values()), confidence, floor=0.0)
            row["episodes"] = len(group)
            row.update(_tokens(group))
            coalitions[key] = row
        entry: dict[str, Any] = {
            "coalitions": coalitions,
            "shapley": None,
            "banzhaf": None,
            "not_estimable": None,
        }
        game = cost_game(records, slots)
        if game is None:
            entry["not_estimable"] = "some model of this game has no price"
        else:
            try:
                # one task shows no spread of cost between tasks: a value, no interval
                spread = game.n_tasks >= 2
                shap = shapley_values(game, confidence=confidence)
                entry["shapley"] = _index(shap, spread=spread)
                entry["banzhaf"] = _index(
                    banzhaf_values(game, confidence=confidence), spread=spread
                )
                entry["se_method"] = shap.method if spread else None
            except NotEstimable as exc:
                entry["not_estimable"] = str(exc)
        models[model] = entry
    # per slot: what one episode's module costs on each model it ran on
    per_slot: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_slot_tokens: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    slot_total: dict[str, float] = defaultdict(float)
    for r in coalition:
        for slot, u in r.outcome.usage.items():
            per_slot_tokens[slot][u.model].append(u.tokens)
            if u.cost_usd is not None:
                per_slot[slot][u.model].append(u.cost_usd)
                slot_total[slot] += u.cost_usd
    slots_out = {
        slot: {
            "models": {
                model: {
                    "usd_per_episode": float(np.mean(per_slot[slot][model]))
                    if per_slot[slot][model]
                    else None,
                    "tokens_per_episode": float(np.mean(tokens)),
                    "episodes": len(tokens),
                }
                for model, tokens in sorted(per_slot_tokens[slot].items())
            },
            "agent_usd_total": slot_total.get(slot, 0.0),
        }
        for slot in [*slots, *sorted(set(per_slot_tokens) - set(slots))]
        if slot in per_slot_tokens
    }
    agent_total = sum(r.outcome.cost_usd or 0.0 for r in coalition)
    return {
        "unit": "USD",
        "default_model": default_model,
        "models": models,
        "slots": slots_out,
        "run": {
            **dict(billed or {}),
            "agent_usd": agent_total,
            "counted_episodes": len(coalition),
        },
        "unpriced": unpriced,
    }


# -- presentation -------------------------------------------------------------


def _ci(row: Mapping[str, Any] | None, key: str = "mean") -> str:
    if not row or row.get(key) is None:
        return "n/a"
    if row.get("ci_low") is None:
        return usd(row[key])
    return f"{usd(row[key])} [{usd(row['ci_low'])}, {usd(row['ci_high'])}]"


def _coalition_rows(cost: Mapping[str, Any], slots: list[str]) -> list[list[str]]:
    from attribution.tables import ordered_keys

    models = list(cost["models"])
    keys = ordered_keys(slots, {k for m in models for k in cost["models"][m]["coalitions"]})
    rows = []
    for key in keys:
        row = [coalition_label(key)]
        for m in models:
            c = cost["models"][m]["coalitions"].get(key)
            row.append(_ci(c))
        rows.append(row)
    return rows


def _slot_rows(cost: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    models = sorted({m for s in cost["slots"].values() for m in s["models"]})
    rows = []
    for slot, entry in cost["slots"].items():
        row = [slot]
        for m in models:
            cell = entry["models"].get(m)
            if cell is None:
                row.append("-")
            else:
                row.append(f"{usd(cell['usd_per_episode'])} ({cell['tokens_per_episode']:.0f} tok)")
        row.append(usd(entry["agent_usd_total"]))
        rows.append(row)
    return models, rows


def _shapley_rows(cost: Mapping[str, Any], slots: list[str]) -> list[list[str]]:
    models = list(cost["models"])
    rows = []
    for slot in slots:
        row = [slot]
        for m in models:
            shap = cost["models"][m].get("shapley") or {}
            cell = shap.get(slot)
            row.append(
                "n/a"
                if not cell
                else usd(cell["value"])
                if cell.get("ci_low") is None
                else f"{usd(cell['value'])} [{usd(cell['ci_low'])}, {usd(cell['ci_high'])}]"
            )
        rows.append(row)
    return rows


def run_line(cost: Mapping[str, Any]) -> str:
    """One line on what the run cost."""
    run = cost.get("run", {})
    parts = [f"run cost: billed {usd(run.get('billed_usd'))}"]
    if run.get("sent_tokens") is not None:
        parts.append(
            f"({run.get('sent_calls', 0)} calls sent, {run['sent_tokens']:,} tokens:"
            f" {run.get('sent_input_tokens', 0):,} in, {run.get('sent_cached_input_tokens', 0):,}"
            f" cached in, {run.get('sent_output_tokens', 0):,} out)"
        )
    parts.append(
        f"; the agents' own cost {usd(run.get('agent_usd'))} over "
        f"{run.get('counted_episodes', 0)} episodes (every call, also those the cache shared)"
    )
    line = " ".join(parts).replace(" ;", ";")
    if cost.get("unpriced"):
        line += f"; no price for {', '.join(cost['unpriced'])} (add it under [prices])"
    return line


def render_cost(cost: Mapping[str, Any], slots: list[str], confidence: float = 0.95) -> Group:
    """Console tables: cost per coalition, per slot, Shapley value of cost; the run's line."""
    conf = round(100 * confidence)
    models = list(cost["models"])
    slot_models, rows = _slot_rows(cost)
    return Group(
        keyed_table(
            f"Agent cost per episode per coalition (USD, {conf}% intervals)",
            "coalition",
            models,
            _coalition_rows(cost, slots),
        ),
        keyed_table(
            "Cost per slot (USD per episode on each model; run total)",
            "slot",
            [*slot_models, "total"],
            rows,
        ),
        keyed_table(
            f"Shapley value of cost (USD per episode, {conf}% intervals)",
            "slot",
            models,
            _shapley_rows(cost, slots),
        ),
        Text(run_line(cost)),
    )


def cost_markdown(cost: Mapping[str, Any], slots: list[str]) -> str:
    """The cost sections of results.md."""
    from attribution.tables import _md_table

    models = list(cost["models"])
    slot_models, rows = _slot_rows(cost)
    return "\n\n".join(
        [
            "## Agent cost per episode per coalition (USD)\n\n"
            + _md_table(["coalition", *models], _coalition_rows(cost, slots)),
            "## Cost per slot (USD per episode on each model; run total)\n\n"
            + _md_table(["slot", *slot_models, "total"], rows),
            "## Shapley value of cost (USD per episode)\n\n"
            + _md_table(["slot", *models], _shapley_rows(cost, slots)),
            run_line(cost),
        ]
    )
