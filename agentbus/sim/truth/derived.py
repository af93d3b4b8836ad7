"""Truth for the single-role profiles, derived exactly from the weak-vs-strong table.

The built-in profile ``strong-<role>`` is ``weak`` in every role but
``<role>``, where it is ``strong`` (:mod:`agentbus.sim.profiles`). In the game
(``sim:weak`` default, ``sim:strong-<role>`` test), a coalition S therefore
runs the strong skill exactly in the slot ``<role>`` when S holds it and the
weak skill everywhere else, which is the coalition ``S ∩ {<role>}`` of the
(``sim:weak``, ``sim:strong``) game. The simulator seeds each answer from the
model name and the prompt, so the two games draw different (equally
distributed) answers for the same prompt: per task they may differ, in
expectation over the generator's tasks they are equal. Hence

    v'(S) = v(S ∩ {<role>}),  and  phi'_<role> = v({<role>}) - v(∅), phi'_other = 0,

with the standard errors and covariance of the stored table carried over.
No extra computation is needed, and a stored table for such a pair (made
with ``python -m agentbus.truth make``) would take precedence. This module holds
the game's side (which coalition stands for which, and the note saying so);
:func:`agentbus.sim.truth.table.derived_table` builds the table from it, so
this module needs nothing of the table's.
"""

from __future__ import annotations

from agentbus.core.coalitions import all_coalitions, coalition_key

WEAK, STRONG = "sim:weak", "sim:strong"
PREFIX = "sim:strong-"


def single_role(test: str, slots: tuple[str, ...]) -> str | None:
    """The role of a ``sim:strong-<role>`` test model whose role is a slot, else None."""
    if not test.startswith(PREFIX):
        return None
    role = test[len(PREFIX) :]
    return role if role in slots else None


def sources(slots: tuple[str, ...], role: str) -> dict[str, str]:
    """Each coalition's key -> the key of the base coalition it equals, ``S ∩ {role}``."""
    source: dict[str, str] = {}
    for members in all_coalitions(slots):
        key = coalition_key(slots, members)
        source[key] = coalition_key(slots, [s for s in members if s == role])
    return source


def note(test: str, role: str) -> str:
    """The provenance line of a derived table: what it came from and why that holds."""
    return (
        f"derived from the {WEAK} vs {STRONG} table: {test} is {WEAK} except in the {role} "
        f"role, so v(S) = v(S ∩ {{{role}}}) of that table (equal in expectation; no run of "
        f"{test} was made)"
    )


__all__ = ["PREFIX", "STRONG", "WEAK", "note", "single_role", "sources"]
