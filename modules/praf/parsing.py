"""Tolerant parsing of model answers into actions and plan steps.

Models rarely follow a format perfectly: they drop the fence's language tag,
forget the fence, or prefix the action with ``Action:``. The action module
accepts all of those; only an answer from which no action can be read at all
becomes an invalid step (never an exception), so a sloppy model loses a round
instead of crashing the episode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*([\w.+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_ACTION_LINE = re.compile(r"^[ \t>*_#-]*action[ \t*_]*:[ \t*_]*(.*)$", re.IGNORECASE | re.MULTILINE)
_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*•]|step\s*\d+\s*[:.)])\s+(.+?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedAction:
    """The action text read from an answer, or why none could be read."""

    text: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.text is not None


def _strip_inline(text: str) -> str:
    """Drop surrounding inline-code backticks and blank edges."""
    text = text.strip()
    if len(text) >= 2 and text.startswith("`") and text.endswith("`"):
        text = text.strip("`").strip()
    return text


def parse_action(answer: str) -> ParsedAction:
    """Read the action from a model answer.

    Tried in order: the first fenced block (any language tag, or none; an
    unclosed fence runs to the end), the text after an ``Action:`` label (up
    to the next blank line), the whole answer when it is a single line.
    """
    if not answer or not answer.strip():
        return ParsedAction(None, "the answer is empty")
    fence = _FENCE.search(answer)
    if fence is not None:
        body = fence.group(2).strip("\n")
        if body.strip():
            return ParsedAction(body.strip())
        return ParsedAction(None, "the fenced block is empty")
    label = _ACTION_LINE.search(answer)
    if label is not None:
        lines = [label.group(1)]
        rest = answer[label.end() :].split("\n")[1:]
        for line in rest:
            if not line.strip():
                break
            lines.append(line)
        text = _strip_inline("\n".join(lines).strip())
        if text:
            return ParsedAction(text)
    lines = [ln for ln in answer.strip().splitlines() if ln.strip()]
    if len(lines) == 1:
        return ParsedAction(_strip_inline(lines[0]))
    return ParsedAction(
        None,
        "no action found: expected one ```action``` block, an 'Action:' line, "
        "or a single-line answer",
    )


def parse_steps(plan: str) -> list[str]:
    """Numbered or bulleted lines of a plan (empty when the plan is prose)."""
    steps = []
    for line in plan.splitlines():
        m = _STEP.match(line)
        if m:
            steps.append(m.group(1))
    return steps


__all__ = ["ParsedAction", "parse_action", "parse_steps"]
