"""The bill is the log: every completed upstream call, as the run's call file holds it.

An episode's record books the calls it sent; an episode that a Ctrl-C, a
kill or a dead server cut short leaves no record, yet its completed calls
were paid, and after a resume its replacement reads them back from the cache
as free. Summing records therefore bills less than was spent (issue 39: 53
and 66 of 71 calls). Every completed upstream call already leaves one line
in ``llm-cache.jsonl`` (the answer, keyed); this module tags that line with
the slot and model it was made for (:func:`billed_to`, set by the episode's
metered handle, the gateway's calls included) and adds a line for calls the
cache does not keep (sampling that is not deterministic), so one read of the
file gives calls and tokens per slot and in total over every process of the
run. Lines of older runs carry no tag; their calls are billed to slot ``?``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentbus.core.inputs import json_object

#: (slot, model as the run's config names it) of the call being made, where known
_BILLED_TO: ContextVar[tuple[str, str] | None] = ContextVar("agentbus_billed_to", default=None)

UNKNOWN_SLOT = "?"


@contextlib.contextmanager
def billed_to(slot: str, model: str) -> Iterator[None]:
    """Calls made inside this block are billed to ``slot`` on ``model``."""
    token = _BILLED_TO.set((slot, model))
    try:
        yield
    finally:
        _BILLED_TO.reset(token)


def bill_tag() -> dict[str, str]:
    """The fields a call's line carries: ``{"s": slot, "a": model}`` (empty outside a slot)."""
    found = _BILLED_TO.get()
    return {} if found is None else {"s": found[0], "a": found[1]}


class _Price(Protocol):
    def cost(self, input_tokens: int, cached_input_tokens: int, output_tokens: int) -> float: ...


class _Prices(Protocol):
    def price(self, model: str) -> _Price | None: ...


@dataclass
class Line:
    """Calls and tokens of one (slot, model)."""

    calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(
        self, calls: int, input_tokens: int, cached_input_tokens: int, output_tokens: int
    ) -> None:
        """Count ``calls`` more calls and their tokens."""
        self.calls += calls
        self.input_tokens += input_tokens
        self.cached_input_tokens += cached_input_tokens
        self.output_tokens += output_tokens

    def sent_summary(self, usd: float) -> dict[str, Any]:
        """These totals and ``usd`` in the keys of results' cost section (``sent_calls``...).

        The bill of a call file and the budget's spend over episode records
        (agentbus/app/budget.py) report the same totals.
        """
        return {
            "billed_usd": usd,
            "sent_calls": self.calls,
            "sent_tokens": self.tokens,
            "sent_input_tokens": self.input_tokens,
            "sent_cached_input_tokens": self.cached_input_tokens,
            "sent_output_tokens": self.output_tokens,
        }


@dataclass
class Bill:
    """Every completed upstream call in a run's call file, per slot and model."""

    lines: dict[tuple[str, str], Line] = field(default_factory=dict)

    @property
    def calls(self) -> int:
        return sum(line.calls for line in self.lines.values())

    def add(self, slot: str, model: str, completion: dict[str, Any]) -> None:
        self.lines.setdefault((slot, model), Line()).add(
            1,
            int(completion.get("prompt_tokens") or 0),
            int(completion.get("cached_prompt_tokens") or 0),
            int(completion.get("completion_tokens") or 0),
        )

    def summary(self, prices: _Prices | None = None) -> dict[str, Any]:
        """Totals in the keys of the cost section (``sent_calls``...), and ``by_slot``."""
        total = Line()
        usd = 0.0
        by_slot: dict[str, dict[str, dict[str, Any]]] = {}
        for (slot, model), line in sorted(self.lines.items()):
            price = prices.price(model) if prices is not None and model else None
            cost = (
                price.cost(line.input_tokens, line.cached_input_tokens, line.output_tokens)
                if price is not None
                else None
            )
            usd += cost or 0.0
            total.add(line.calls, line.input_tokens, line.cached_input_tokens, line.output_tokens)
            by_slot.setdefault(slot, {})[model or UNKNOWN_SLOT] = {
                "calls": line.calls,
                "tokens": line.tokens,
                "input_tokens": line.input_tokens,
                "cached_input_tokens": line.cached_input_tokens,
                "output_tokens": line.output_tokens,
                "usd": cost,
            }
        return {**total.sent_summary(usd), "by_slot": by_slot, "source": "call log"}


def call_lines(path: Path) -> Iterator[dict[str, Any] | None]:
    """Each non-blank line of the call file at ``path``: its JSON object, or None.

    The bill and the cache (agentbus/llm/cache.py) read the same file; None
    is a line a crash cut short (or anything else that is not an object).
    """
    with path.open("rb") as f:
        for raw in f:
            if raw.strip():
                yield json_object(raw)


def read_bill(path: Path) -> Bill | None:
    """The bill of the call file at ``path`` (None when there is none); bad lines skipped."""
    if not path.is_file():
        return None
    bill = Bill()
    for entry in call_lines(path):
        completion = None if entry is None else entry.get("c")
        if entry is None or not isinstance(completion, dict):
            continue  # a line a crash cut short: the call's answer never arrived whole
        slot = entry.get("s") or UNKNOWN_SLOT
        model = entry.get("a") or ""
        bill.add(str(slot), str(model), completion)
    return bill


__all__ = ["Bill", "Line", "bill_tag", "billed_to", "call_lines", "read_bill"]
