"""Pass or fail: does the final answer state every ground-truth fact?

StableToolBench asks a judge model whether the answer solves the query; here
the ground truth is known exactly, so the check is deterministic. A number
fact matches any number in the answer within half a cent (``12`` matches
``12.0`` and ``12 °C``); any other fact must appear as a phrase, ignoring
case and spacing.
"""

from __future__ import annotations

import re

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)?")
_SPACE = re.compile(r"\s+")


def _as_number(text: str) -> float | None:
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip()


def states(answer: str, fact: str) -> bool:
    """Whether ``answer`` states ``fact``."""
    value = _as_number(fact) if not fact.startswith("+") else None
    if value is not None:
        return any(
            (n := _as_number(m.group(0))) is not None and abs(n - value) < 0.005
            for m in _NUMBER.finditer(answer)
        )
    return _norm(fact) in _norm(answer)


def missing(answer: str, facts: list[str]) -> list[str]:
    """The facts ``answer`` does not state (empty: the task passes)."""
    return [f for f in facts if not states(answer, f)]
