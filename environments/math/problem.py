"""A generated math problem and the small text helpers its generators share.

:class:`Problem` is what every knowledge point's generator returns
(:mod:`environments.math.algebra`, :mod:`environments.math.geometry`) and what
:mod:`environments.math.generator` turns into a task.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import sympy


@dataclass
class Problem:
    """One generated problem and everything the expert needs to play it."""

    text: str
    answer: sympy.Expr
    steps: list[str]
    method: str
    keywords: tuple[str, ...]
    wrong_method: str
    wrong_steps: list[str]
    wrong_answer: sympy.Expr
    knowledge_point: str = ""
    level: int = 1
    extra: dict[str, str] = field(default_factory=dict)


def lin(a: int, b: int, var: str = "x") -> str:
    """``a*x + b`` as plain text with tidy signs (``3*x - 5``)."""
    head = var if a == 1 else f"-{var}" if a == -1 else f"{a}*{var}"
    return head if b == 0 else f"{head} {'+' if b > 0 else '-'} {abs(b)}"


def tex(text: str) -> str:
    """Plain expression text as it would be typeset (``3*x`` -> ``3x``)."""
    return text.replace("*", "")


def nz(rng: random.Random, lo: int, hi: int) -> int:
    while True:
        v = rng.randint(lo, hi)
        if v != 0:
            return v
