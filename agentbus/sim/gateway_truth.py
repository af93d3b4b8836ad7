"""Exact truths of gateway agents under the simulator's generic gateway model.

Under :mod:`agentbus.sim.gateway_model` every call of a module is right with
the probability its model's skill gives (``probability(profile, module)``),
independently of every other call, and two wrong answers never agree (they
differ by a random amount up to a million; the model treats agreement as
probability 0). So an agent's chance of answering right follows from its
own logic alone: which module it asks, in which order, and what it does with
the answers. :func:`success` enumerates that exactly: it runs the agent's
logic once per sequence of verdicts (right or wrong for each call, in the
order the logic makes them) and adds up the probabilities of the sequences
that end on the right answer. No closed form to derive by hand, and any
logic works, loops and early exits included.

The logic is a plain function of ``ask``: ``ask(module)`` returns
:data:`RIGHT` when that call is right and a value of its own, never repeated,
when it is wrong; the function returns the agent's final answer. Each
example's ``truth.py`` writes its agent's logic this way and calls
:func:`values` for the table of v(S).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

from agentbus.sim.gateway_model import probability
from agentbus.sim.profiles import BUILTIN

#: what a right call returns; a wrong call returns ``wrong-<k>`` (k: its call number)
RIGHT = "right"

Ask = Callable[[str], str]
Logic = Callable[[Ask], "str | None"]


class _Unscripted(Exception):
    """The logic made a call past the end of the verdict script: branch there."""


def success(logic: Logic, p: Mapping[str, float]) -> float:
    """P(``logic`` returns the right answer) when each call of module m is right w.p. p[m]."""
    total = 0.0
    stack: list[tuple[bool, ...]] = [()]
    while stack:
        script = stack.pop()
        weight = 1.0
        calls = 0

        def ask(module: str, script: tuple[bool, ...] = script) -> str:
            nonlocal weight, calls
            if calls >= len(script):
                raise _Unscripted
            right = script[calls]
            weight *= p[module] if right else 1.0 - p[module]
            calls += 1
            return RIGHT if right else f"wrong-{calls}"

        try:
            answer = logic(ask)
        except _Unscripted:
            stack.extend(((*script, True), (*script, False)))
            continue
        if calls < len(script):
            continue  # this verdict sequence ended earlier: counted on its own prefix
        if answer == RIGHT:
            total += weight
    return total


def values(
    logic: Logic,
    slots: Sequence[str],
    default: str = "weak",
    test: str = "strong",
) -> dict[tuple[str, ...], float]:
    """v(S) for every coalition S (the slots on ``test``, the rest on ``default``)."""
    out: dict[tuple[str, ...], float] = {}
    for k in range(len(slots) + 1):
        for coalition in itertools.combinations(slots, k):
            p = {m: probability(BUILTIN.get(test if m in coalition else default), m) for m in slots}
            out[coalition] = success(logic, p)
    return out


def shapley(v: Mapping[tuple[str, ...], float], slots: Sequence[str]) -> dict[str, float]:
    """The Shapley value of each slot from v over every coalition (slot order as ``slots``)."""
    n = len(slots)
    phi = dict.fromkeys(slots, 0.0)
    for coalition, value in v.items():
        for slot in slots:
            if slot in coalition:
                continue
            with_slot = tuple(s for s in slots if s in coalition or s == slot)
            k = len(coalition)
            weight = math.factorial(k) * math.factorial(n - k - 1) / math.factorial(n)
            phi[slot] += weight * (v[with_slot] - value)
    return phi


__all__ = ["RIGHT", "shapley", "success", "values"]
