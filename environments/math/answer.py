"""Answer checking: normalised LaTeX first, then sympy equivalence under a time limit.

``\\frac{1}{2}`` and ``0.5`` are the same answer, so are ``2+3i`` and ``3i+2``;
a rounded decimal reference (``214.29``) accepts any value that rounds to it;
tuples and intervals compare in order (brackets included), sets and lists of
roots in any order.
"""

from __future__ import annotations

from environments.math.latex import boxed
from environments.math.ops import normalise
from environments.math.pool import SympyPool, default_pool
from environments.math.safeparse import CalcError


def extract_answer(solution: str) -> str | None:
    """The final answer of a worked solution: its last ``\\boxed{...}``."""
    return boxed(solution)


class AnswerChecker:
    """``await AnswerChecker().check(given, expected)`` -> bool (never raises)."""

    def __init__(self, pool: SympyPool | None = None, timeout: float = 5.0) -> None:
        self.pool = pool or default_pool()
        self.timeout = timeout

    async def check(self, given: str, expected: str) -> bool:
        g, e = normalise(given), normalise(expected)
        if not g:
            return False
        if g == e:
            return True
        try:
            return bool(await self.pool.run("equivalent", given, expected, timeout=self.timeout))
        except CalcError:
            return False


__all__ = ["AnswerChecker", "extract_answer"]
