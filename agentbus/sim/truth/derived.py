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
with ``python -m agentbus.truth make``) would take precedence.
"""

from __future__ import annotations

from agentbus.coalitions import all_coalitions, coalition_key
from agentbus.sim.truth.table import TruthTable

WEAK, STRONG = "sim:weak", "sim:strong"
PREFIX = "sim:strong-"


def single_role(test: str, slots: tuple[str, ...]) -> str | None:
    """The role of a ``sim:strong-<role>`` test model whose role is a slot, else None."""
    if not test.startswith(PREFIX):
        return None
    role = test[len(PREFIX) :]
    return role if role in slots else None


def derive(base: TruthTable, test: str) -> TruthTable | None:
    """The (``sim:weak``, ``test``) table from the (``sim:weak``, ``sim:strong``) one, or None."""
    if base.default != WEAK or base.test != STRONG:
        return None
    role = single_role(test, base.slots)
    if role is None:
        return None
    keys = list(base.values)
    index = {k: i for i, k in enumerate(keys)}
    # each coalition of the derived game is the base coalition S ∩ {role}
    source: dict[str, str] = {}
    for members in all_coalitions(base.slots):
        key = coalition_key(base.slots, members)
        source[key] = coalition_key(base.slots, [s for s in members if s == role])
    values = {k: base.values[source[k]] for k in keys}
    covariance = [[base.covariance[index[source[a]]][index[source[b]]] for b in keys] for a in keys]
    note = (
        f"derived from the {WEAK} vs {STRONG} table: {test} is {WEAK} except in the {role} "
        f"role, so v(S) = v(S ∩ {{{role}}}) of that table (equal in expectation; no run of "
        f"{test} was made)"
    )
    provenance = base.provenance.model_copy(update={"derived": note})
    return base.model_copy(
        update={"test": test, "values": values, "covariance": covariance, "provenance": provenance}
    )


__all__ = ["derive", "single_role"]
