"""Reading a PRAF prompt (docs/prompt-contract.md) the way the expert needs it.

The user message is a list of ``## `` sections; the history is one block per
finished round (``Round k`` / ``Thought:`` / ``Action:`` / ``Feedback:``). The
expert needs each round's action text, to replay it on the initial scene.
A round is the :class:`~agentbus.envkit.history.PastRound` the other
experts use; robot reads it with patterns of its own, which allow markup
before ``Round``, ``Thought:``, ``Action:`` and ``Feedback:``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentbus import PastRound

_ROUND = re.compile(r"^\W*Round\s+(\d+)\b.*$", re.MULTILINE)
_ACTION = re.compile(r"^\W*Action:[ \t]?", re.MULTILINE)
_FEEDBACK = re.compile(r"^\W*Feedback:[ \t]?", re.MULTILINE)
_THOUGHT = re.compile(r"^\W*Thought:[ \t]?", re.MULTILINE)


#: prompts whose reading is remembered: the expert reads each prompt several
#: times (to find the task, to judge, to answer), each time from the start
_MEMO = 64


def sections(user: str) -> dict[str, str]:
    """``## title`` -> body (up to the next ``## `` line); the first one wins."""
    return dict(_sections(user))


@lru_cache(maxsize=_MEMO)
def _sections(user: str) -> tuple[tuple[str, str], ...]:
    # a plain scan, equal to finding re.compile(r"^## (.+?)\s*$", re.MULTILINE)
    # (a header is a line "## " plus at least one character; titles and bodies are
    # stripped) and several times faster
    heads: list[tuple[int, int, str]] = []  # (line start, line end, title)
    start = 0 if user.startswith("## ") else _next_header(user, 0)
    while start >= 0:
        eol = user.find("\n", start)
        if eol < 0:
            eol = len(user)
        if eol > start + 3:
            heads.append((start, eol, user[start + 3 : eol].strip()))
        start = _next_header(user, eol)
    out: dict[str, str] = {}
    for i, (_, eol, title) in enumerate(heads):
        end = heads[i + 1][0] if i + 1 < len(heads) else len(user)
        out.setdefault(title, user[eol:end].strip())
    return tuple(out.items())


def _next_header(user: str, pos: int) -> int:
    """Start of the next line at or after ``pos`` that begins with "## " (-1: none)."""
    at = user.find("\n## ", pos)
    return at + 1 if at >= 0 else -1


def _between(block: str, start: re.Pattern[str], end: re.Pattern[str] | None) -> str:
    m = start.search(block)
    if m is None:
        return ""
    rest = block[m.end() :]
    if end is not None:
        e = end.search(rest)
        if e is not None:
            rest = rest[: e.start()]
    return rest.strip()


def history_rounds(history: str) -> list[PastRound]:
    """The rounds of a ``## History`` (or ``## Last step``) body, in order."""
    return list(_history_rounds(history))


@lru_cache(maxsize=_MEMO)
def _history_rounds(history: str) -> tuple[PastRound, ...]:
    heads = list(_ROUND.finditer(history))
    rounds: list[PastRound] = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(history)
        block = history[m.end() : end]
        rounds.append(
            PastRound(
                number=int(m.group(1)),
                thought=_between(block, _THOUGHT, _ACTION),
                action=_between(block, _ACTION, _FEEDBACK),
                feedback=_between(block, _FEEDBACK, None),
            )
        )
    return tuple(rounds)
