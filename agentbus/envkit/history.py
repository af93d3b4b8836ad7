"""The rounds a PRAF prompt shows (docs/prompt-contract.md), read as a simulated expert needs them.

An environment of many rounds shows the agent its history: the user message's
``## History`` section has one block per finished round (``Round k`` /
``Thought:`` / ``Action:`` / ``Feedback:``), and a reflection's prompt may
show the step it is about under ``## Last step``. An expert replays these
rounds to know the state the agent is in. The ``## `` sections themselves are
read by :func:`agentbus.prompt_sections`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

_ROUND = re.compile(r"^Round\s+(\d+)\s*$", re.MULTILINE)
_FIELD = re.compile(r"^(Thought|Action|Feedback):[ \t]?", re.MULTILINE)


@dataclass(frozen=True)
class PastRound:
    """One finished round as the prompt shows it."""

    number: int
    thought: str
    action: str
    feedback: str

    @property
    def executed(self) -> bool:
        """False when the action module's answer could not be parsed (the env never saw it)."""
        a = self.action.strip()
        return bool(a) and not a.startswith("(invalid") and a != "(none)"


def read_rounds(history: str) -> list[PastRound]:
    """Every ``Round k`` block of ``history``, in order; a missing field reads as ``""``."""
    heads = list(_ROUND.finditer(history))
    out: list[PastRound] = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(history)
        block = history[m.end() : end]
        fields: dict[str, str] = {}
        marks = list(_FIELD.finditer(block))
        for j, f in enumerate(marks):
            stop = marks[j + 1].start() if j + 1 < len(marks) else len(block)
            fields.setdefault(f.group(1), block[f.end() : stop].strip())
        out.append(
            PastRound(
                int(m.group(1)),
                fields.get("Thought", ""),
                fields.get("Action", ""),
                fields.get("Feedback", ""),
            )
        )
    return out


def rounds_so_far(
    parts: Mapping[str, str], read: Callable[[str], list[PastRound]] = read_rounds
) -> list[PastRound]:
    """The rounds a prompt shows: its ``## History``, then its ``## Last step`` when new.

    A reflection's prompt may show the step it is about only under ``Last
    step``; a replay must include it once. ``read`` reads one body's rounds.
    """
    past = read(parts.get("History", ""))
    last_step = read(parts.get("Last step", ""))
    if last_step and all(r.number != last_step[-1].number for r in past):
        past.append(last_step[-1])
    return past


def last_action(text: str, verbs: tuple[str, ...]) -> str | None:
    """The last ``verb[argument]`` in ``text`` with one of ``verbs``, normalised; or None."""
    pattern = re.compile(rf"\b({'|'.join(map(re.escape, verbs))})\s*\[([^\]\n]*)\]", re.I)
    found = pattern.findall(text)
    if not found:
        return None
    verb, arg = found[-1]
    return f"{verb.lower()}[{arg.strip()}]"
