"""What the models' answers looked like, per slot: cut off, unreadable, too long.

Real models answer outside the format now and then: an answer cut at the
output limit (``finish_reason: "length"``), an action the environment could
not read, a function call of no offered function, a prompt that outgrew the
context window. Each is counted per slot in the episode's usage
(:class:`~agentbus.outcome.SlotUsage`); this module sums them over the
counted records for ``results.json`` (``answers``) and ``results.md``, so a
user sees which module on which model loses rounds to format, not skill.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentbus.record import EpisodeRecord

#: the per-slot counters, in table order, with their column titles
COLUMNS: tuple[tuple[str, str], ...] = (
    ("calls", "calls"),
    ("cut_off", "cut off at max tokens"),
    ("unparsable", "unparsable actions"),
    ("invalid_tool_calls", "invalid tool calls"),
    ("context_overflows", "context overflows"),
)


def answer_summary(records: Iterable[EpisodeRecord], slots: Iterable[str]) -> dict[str, Any]:
    """``{"by_slot": {slot: {model: counts}}, "totals": counts}`` over ``records``."""
    by_slot: dict[str, dict[str, dict[str, Any]]] = {s: {} for s in slots}
    totals = _empty()
    for record in records:
        for slot, u in record.outcome.usage.items():
            row = by_slot.setdefault(slot, {}).setdefault(u.model or "?", _empty())
            for target in (row, totals):
                target["episodes"] += 1
                target["calls"] += u.calls
                target["cut_off"] += u.truncated
                target["unparsable"] += u.unparsable
                target["invalid_tool_calls"] += u.invalid_tool_calls
                target["context_overflows"] += u.context_overflows
                reasons = target["finish_reasons"]
                for reason, n in u.finish_reasons.items():
                    reasons[reason] = reasons.get(reason, 0) + n
    return {"by_slot": {s: rows for s, rows in by_slot.items() if rows}, "totals": totals}


def _empty() -> dict[str, Any]:
    return {
        "episodes": 0,
        "calls": 0,
        "cut_off": 0,
        "unparsable": 0,
        "invalid_tool_calls": 0,
        "context_overflows": 0,
        "finish_reasons": {},
    }


def answer_line(summary: Mapping[str, Any]) -> str | None:
    """One console line when any answer was cut, unreadable or too long; else None."""
    t = summary.get("totals") or {}
    parts = [f"{t.get(key, 0)} {title}" for key, title in COLUMNS[1:] if t.get(key, 0)]
    if not parts:
        return None
    return (
        f"model answers: {', '.join(parts)} (of {t.get('calls', 0)} calls; per slot in results.md)"
    )


def answer_markdown(results: Mapping[str, Any]) -> str:
    """The ``## Model answers`` section of results.md (empty without data)."""
    summary = results.get("answers")
    if not isinstance(summary, Mapping) or not summary.get("by_slot"):
        return ""
    head = "| slot | model | " + " | ".join(title for _, title in COLUMNS) + " |"
    lines = [
        "",
        "## Model answers",
        "",
        "Per slot and model, over the counted episodes: answers cut at the output limit "
        "(finish_reason length), actions the environment could not read, unusable function "
        "calls, prompts refused for the context window (each such episode is a task failure).",
        "",
        head,
        "|" + "---|" * (len(COLUMNS) + 2),
    ]
    for slot, rows in summary["by_slot"].items():
        for model, row in rows.items():
            cells = " | ".join(str(row.get(key, 0)) for key, _ in COLUMNS)
            lines.append(f"| {slot} | `{model}` | {cells} |")
    return "\n".join(lines) + "\n"


__all__ = ["COLUMNS", "answer_line", "answer_markdown", "answer_summary"]
