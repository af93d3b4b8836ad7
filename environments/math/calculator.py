"""The calculator tool: a LaTeX or plain expression (or equations) to its value.

Input is screened here, in the caller's process, so that code-like text is
refused at once; the sympy work runs in the worker pool under a time limit.
"""

from __future__ import annotations

from environments.math.ops import split_top
from environments.math.pool import SympyPool, default_pool
from environments.math.safeparse import CalcError, to_plain


class Calculator:
    """``await Calculator()(text)`` -> result text; raises CalcError with a reason."""

    def __init__(self, pool: SympyPool | None = None, timeout: float = 5.0) -> None:
        self.pool = pool or default_pool()
        self.timeout = timeout

    async def __call__(self, expression: str) -> str:
        text = expression.strip()
        if not text:
            raise CalcError("the calculator needs an expression")
        for part in split_top(text.replace("==", "="), ",;="):
            if part.strip():
                to_plain(part)  # refuses code-like input before any IPC
        result = await self.pool.run("calculate", text, timeout=self.timeout)
        return str(result)


__all__ = ["Calculator"]
