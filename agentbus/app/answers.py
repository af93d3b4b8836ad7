"""What the models' answers looked like, per slot: cut off, refused, too long.

Real models answer outside the format now and then: an answer cut at the
output limit (``finish_reason: "length"``), a refused action (no action in
the answer, a copy of the prompt, or one the environment rejected: the three
kinds of :mod:`agentbus.core.refusals`, each its own column), a function call of
no offered function, a prompt that outgrew the context window. Each is
counted per slot in the episode's usage (:class:`~agentbus.core.outcome.SlotUsage`);
this module sums them over the counted records for ``results.json``
(``answers``) and ``results.md``, so a user sees which module on which
model loses rounds to format, not skill.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentbus.core.record import EpisodeRecord
from agentbus.core.refusals import refused_total

#: a module whose refused actions exceed this share of its calls is named at the end of the run
MOST = 0.5
#: ... once it made at least this many calls
MIN_CALLS = 4

#: the per-slot counters, in table order, with their column titles
COLUMNS: tuple[tuple[str, str], ...] = (
    ("calls", "calls"),
    ("cut_off", "cut off at max tokens"),
    ("unparsable", "refused: no action found"),
    ("copied", "refused: copy of the prompt"),
    ("rejected", "refused: rejected by the environment"),
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
                target["copied"] += u.copied
                target["rejected"] += u.rejected
                target["refused"] += refused_total(u)
                if target["first_refusal"] is None and u.refusal:
                    target["first_refusal"] = u.refusal
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
        "copied": 0,
        "rejected": 0,
        "refused": 0,
        "first_refusal": None,
        "invalid_tool_calls": 0,
        "context_overflows": 0,
        "finish_reasons": {},
    }


def answer_line(summary: Mapping[str, Any]) -> str | None:
    """One console line when any answer was cut, unreadable or too long; else None."""
    t = summary.get("totals") or {}
    parts = [f"{t.get(key, 0)} {title}" for key, title in COLUMNS[1:] if t.get(key, 0)]
    calls = t.get("calls", 0)
    lines = (
        [f"model answers: {', '.join(parts)} (of {calls} calls; per slot in results.md)"]
        if parts
        else []
    )
    lines += refusal_lines(summary)
    return "\n".join(lines) or None


def refusal_lines(summary: Mapping[str, Any]) -> list[str]:
    """One line per module and model that had most of its actions refused.

    A parser that refuses honest answers would otherwise hide in a table of
    zeros: the run's values would read as the module's skill.
    """
    out = []
    for slot, rows in (summary.get("by_slot") or {}).items():
        for model, row in rows.items():
            calls, refused = int(row.get("calls", 0)), int(row.get("refused", 0))
            if calls >= MIN_CALLS and refused > MOST * calls:
                kinds = ", ".join(
                    f"{row.get(key, 0)} {key}" for key in ("unparsable", "copied", "rejected")
                )
                out.append(
                    f"warning: {slot} on {model}: {refused} of {calls} answers refused ({kinds}); "
                    f"first: {row.get('first_refusal') or 'no reason recorded'}"
                )
    return out


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
        "(finish_reason length); refused actions, which never reached the environment as a "
        "move, in three kinds: no action found in the answer, a copy of the prompt (a guide "
        "example or earlier feedback handed back), and an action the environment read and "
        "rejected as none it knows; unusable function calls; prompts refused for the context "
        "window (each such episode is a task failure).",
        "",
        head,
        "|" + "---|" * (len(COLUMNS) + 2),
    ]
    for slot, rows in summary["by_slot"].items():
        for model, row in rows.items():
            cells = " | ".join(str(row.get(key, 0)) for key, _ in COLUMNS)
            lines.append(f"| {slot} | `{model}` | {cells} |")
    return "\n".join(lines) + "\n"


__all__ = ["COLUMNS", "answer_line", "answer_markdown", "answer_summary", "refusal_lines"]
