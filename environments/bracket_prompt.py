"""Reading a PRAF prompt (docs/prompt-contract.md) as a simulated expert needs it.

Shared by the experts of environments whose actions are ``verb[argument]``
(shopping, navigation, ticket; robot's expert uses :class:`PastRound` too):
the user message is a series of ``## `` sections; the history has one block
per finished round (``Round k`` / ``Thought:`` / ``Action:`` /
``Feedback:``), which an expert replays to know the state the agent is in.
The ``## `` sections are read by the environment kit
(:func:`agentbus.prompt_sections`), like every other environment's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agentbus import prompt_sections as sections

_ROUND = re.compile(r"^Round\s+(\d+)\s*$", re.MULTILINE)
_FIELD = re.compile(r"^(Thought|Action|Feedback):[ \t]?", re.MULTILINE)


@dataclass(frozen=True)
class PastRound:
    number: int
    thought: str
    action: str
    feedback: str

    @property
    def executed(self) -> bool:
        """False when the action module's answer could not be parsed (the env never saw it)."""
        a = self.action.strip()
        return bool(a) and not a.startswith("(invalid") and a != "(none)"


def rounds(history: str) -> list[PastRound]:
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
    parts: Mapping[str, str], read: Callable[[str], list[PastRound]] = rounds
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


__all__ = ["PastRound", "last_action", "rounds", "rounds_so_far", "sections"]
