"""Coalitions: which slots of an agent use the test implementation.

An *assignment* maps every slot to the default or a test implementation; the
*coalition* S is the set of slots that use the test one. The key of a
coalition names its slots in slot order joined by ``+`` (``""`` for none), the
format of results files and event payloads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations


def coalition_key(slots: Sequence[str], coalition: Iterable[str]) -> str:
    """Canonical name of ``coalition``: its members in slot order, joined by '+'."""
    members = set(coalition)
    unknown = members - set(slots)
    if unknown:
        raise ValueError(f"not slots of this agent: {', '.join(sorted(unknown))}")
    return "+".join(s for s in slots if s in members)


def all_coalitions(slots: Sequence[str]) -> list[tuple[str, ...]]:
    """Every subset of ``slots`` (2^n of them), smallest first, members in slot order."""
    out: list[tuple[str, ...]] = []
    for size in range(len(slots) + 1):
        out.extend(combinations(slots, size))
    return out
