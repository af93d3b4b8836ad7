"""Coalitions: which slots of an agent use the test implementation.

An *assignment* maps every slot to the default or a test implementation; the
*coalition* S is the set of slots that use the test one. The key of a
coalition names its slots in slot order joined by ``+``, the format of results
files, event payloads and attribution games.

The empty coalition (every slot on the default model) has one spelling per
audience, all defined here: its key is ``""`` (:data:`EMPTY_KEY`, data), people
see ``(none)`` (:data:`EMPTY_LABEL`: tables, plots, dashboard, tail), and an
episode id writes ``-`` in its place (:data:`EMPTY_IN_EPISODE_ID`) so that no id
field is empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

#: The key of the empty coalition, as results files, events and games spell it.
EMPTY_KEY = ""
#: How people see the empty coalition: results tables, plots, dashboard, tail.
EMPTY_LABEL = "(none)"
#: How an episode id spells the empty key. Ids are matched as strings on
#: ``--resume``, so this stays what existing run directories already contain.
EMPTY_IN_EPISODE_ID = "-"


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


def coalition_label(key: str) -> str:
    """What people see for the coalition ``key``: the key, or ``(none)`` for the empty one."""
    return key or EMPTY_LABEL


def coalition_members(text: str) -> frozenset[str]:
    """The member set of a coalition typed by a person or read from a payload.

    Members may be joined by ``+`` or ``,`` in any order; the empty key ``""`` and
    the label ``(none)`` both mean the empty coalition.
    """
    if text.strip() in (EMPTY_KEY, EMPTY_LABEL):
        return frozenset()
    return frozenset(s for s in text.replace(",", "+").split("+") if s)
