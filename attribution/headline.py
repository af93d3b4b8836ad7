"""The one sentence a run answers with: which module matters most, and whether that is known.

The console (:func:`agentbus.app.summary.print_summary`), results.md
(:func:`attribution.tables.to_markdown`) and the viewer (the service's
snapshot, ``headline``) all print these lines, so they say the same thing in
the same words.

A slot is called the MVP only when something identifies it:

* an adaptive run with ``--stop mvp`` or ``--stop ranking``: its rule, and
  only when the rule was met (results.json ``adaptive.done``; the snapshot's
  ``done``). A run that ran out of tasks or hit its cap first has not
  identified the top slot, whatever the fixed-sample rank intervals say: an
  audit found all 17 such runs headed "MVP: ..." beside a last line saying
  the top slot was not identified;
* any other run: the final intervals, i.e. the top slot's rank interval is
  1-1 (from results.json's rank intervals; without them, its interval lies
  above every other slot's).

Otherwise the line starts ``MVP not identified`` (:data:`NOT_IDENTIFIED`) and
says why, with the ranking as estimated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentbus.llm.labels import model_labels

#: the words every surface uses when no slot is identified as the MVP
NOT_IDENTIFIED = "MVP not identified"
#: the rules that stop on the top slot or the order being identified
IDENTIFYING_RULES = ("mvp", "ranking")


def signed(x: float) -> str:
    return f"{x:+.2f}"


def interval_text(row: Mapping[str, Any]) -> str:
    """`` [low, high]`` of a row's ``ci_*``, or nothing when it has none."""
    if row.get("ci_low") is None or row.get("ci_high") is None:
        return ""
    return f" [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"


def stop_rule(results: Mapping[str, Any]) -> tuple[str | None, bool]:
    """(the identifying ``--stop`` rule of an adaptive run or None, whether it was met).

    Reads results.json's ``adaptive`` block or a live snapshot's ``stop``/``done``.
    """
    adaptive = results.get("adaptive")
    if isinstance(adaptive, Mapping):
        rule, met = adaptive.get("stop"), adaptive.get("done")
    elif adaptive is True:
        rule, met = results.get("stop"), results.get("done")
    else:
        return None, False
    return (str(rule), bool(met)) if rule in IDENTIFYING_RULES else (None, False)


def _top_identified(rows: list[tuple[str, Mapping[str, Any]]]) -> bool:
    """Do the final intervals identify the first of ``rows`` (sorted by value) as the top?"""
    top = rows[0][1]
    if top.get("rank_high") is not None:
        return int(top["rank_high"]) <= 1
    low = top.get("ci_low")
    highs = [r.get("ci_high") for _, r in rows[1:]]
    return low is not None and all(h is not None and low > h for h in highs)


def headline(results: Mapping[str, Any]) -> list[str]:
    """One line per test model: the MVP or ``MVP not identified``, the ranking, the zeros.

    ``MVP: action +0.30 [0.20, 0.40] > reasoning +0.20 [0.13, 0.27] > ...;
    planning's interval holds 0``.
    """
    models = list(results.get("models") or {})
    labels = model_labels(models)
    rule, met = stop_rule(results)
    lines = []
    for model in models:
        summary = results["models"][model]
        where = f" ({labels[model]} as test model)" if len(models) > 1 else ""
        shap = summary.get("shapley") or {}
        rows = [(s, r) for s, r in shap.items() if r and r.get("value") is not None]
        if not rows:
            reason = summary.get("not_estimable") or "no counted episodes"
            lines.append(f"{NOT_IDENTIFIED}{where}: phi is not estimable ({reason})")
            continue
        rows.sort(key=lambda sr: -float(sr[1]["value"]))
        ranking = " > ".join(f"{s} {signed(r['value'])}{interval_text(r)}" for s, r in rows)
        top = rows[0][0]
        tied = [s for s, r in rows[1:] if r.get("rank_low") is not None and int(r["rank_low"]) <= 1]
        zero = [
            s for s, r in rows if r.get("ci_low") is not None and r["ci_low"] <= 0 <= r["ci_high"]
        ]
        if len(zero) == len(rows):  # nothing is told from zero: naming an MVP would mislead
            lines.append(
                f"{NOT_IDENTIFIED}{where}: {ranking}; every interval holds 0 (more tasks needed)"
            )
            continue
        if zero:
            tail = "; " + ", ".join(f"{s}'s" for s in zero)
            tail += " interval holds 0" if len(zero) == 1 else " intervals hold 0"
        elif all(r.get("ci_low") is not None for _, r in rows):
            tail = "; every interval excludes 0"
        else:
            tail = ""
        identified = met if rule is not None else len(rows) == 1 or _top_identified(rows)
        if rule is not None and not met:
            tail += f"; its stop rule (--stop {rule}) was not met"
        elif not identified and tied and len(tied) == len(rows) - 1 > 1:
            tail += "; no slot is told apart from the others yet (rank intervals)"
        elif not identified and tied:
            tail += f"; {top} is not yet told apart from {' or '.join(tied)} (rank intervals)"
        head = f"MVP{where}: " if identified else f"{NOT_IDENTIFIED}{where}: "
        lines.append(head + ranking + tail)
    return lines


__all__ = [
    "IDENTIFYING_RULES",
    "NOT_IDENTIFIED",
    "headline",
    "interval_text",
    "signed",
    "stop_rule",
]
