"""Reading a contract-shaped PRAF prompt (docs/prompt-contract.md) for the OS expert.

The ``## `` sections are read by the environment kit
(:func:`agentbus.prompt_sections`); the history's rounds and the moves a
text names are read here.
"""

from __future__ import annotations

import re

from agentbus import PastRound

_ROUND = re.compile(r"^Round (\d+)$", re.MULTILINE)
_PARTS = re.compile(r"\AThought: (.*?)\nAction: (.*?)\nFeedback: (.*)\Z", re.DOTALL)
_STATUS = re.compile(r"\(exit status (-?\d+)\)\s*\Z")
_OUTPUT = re.compile(r"\AThe output of the OS:\n(.*?)\n\(exit status -?\d+\)\s*\Z", re.DOTALL)
_TICKS = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_NEXT = re.compile(r"Next(?: command)?:\s*`([^`\n]+)`", re.IGNORECASE)


class Turn(PastRound):
    """One finished round as the history shows it, with the command's exit status and output."""

    @property
    def status(self) -> int | None:
        m = _STATUS.search(self.feedback)
        return int(m.group(1)) if m else None

    @property
    def output(self) -> str:
        m = _OUTPUT.match(self.feedback.strip())
        return m.group(1) if m else ""


def turns(history: str) -> list[Turn]:
    """The rounds of a ``## History`` (or ``## Last step``) body, in order."""
    out: list[Turn] = []
    marks = list(_ROUND.finditer(history))
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(history)
        body = history[m.end() : end].strip("\n")
        parts = _PARTS.match(body)
        if parts:
            thought, action, feedback = parts.group(1), parts.group(2), parts.group(3)
            out.append(Turn(int(m.group(1)), thought, action.strip(), feedback.strip()))
    return out


def squash(text: str) -> str:
    """Whitespace-insensitive one-line form of a command (lines joined by ``; ``)."""
    lines = [" ".join(line.split()) for line in text.strip().splitlines()]
    return "; ".join(line for line in lines if line)


def named_move(text: str) -> str | None:
    """The move a free text names (a command, ``finish``, ``answer(...)``).

    The span after "Next:" when there is one (a reflection quotes the failed
    command first), else the first inline-code span; fence markers do not count.
    """
    found = _NEXT.findall(text) or _TICKS.findall(text)
    return squash(found[0]) if found else None


__all__ = ["Turn", "named_move", "squash", "turns"]
