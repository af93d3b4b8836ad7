"""The exact v(S) of agent.py under the simulator's generic gateway model.

Each call of a module is right with the probability its model's skill gives
(agentbus/sim/gateway_model.py: manager -> planning, solver -> reasoning;
``base`` of that skill), independently of every other call, and two wrong
answers never agree. With m = manager, s = solver, following agent.py and
the generic model's rule for a module offered a worker (**Workers**: right,
it answers right; wrong, it repeats what its worker reported):

* both on: the manager's final answer is right when the manager is right,
  or when it is wrong and repeats a right report: ``1 - (1 - m)(1 - s)``;
* no solver: the manager alone, ``m``;
* no manager: the solver alone, ``s``.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import itertools
import math

from agentbus.sim.gateway_model import probability
from agentbus.sim.profiles import BUILTIN

SLOTS = ("manager", "solver")


def success(m: float | None, s: float | None) -> float:
    """P(the final answer is right); ``None`` for a module that is switched off."""
    if m is None:
        return 0.0 if s is None else s
    if s is None:
        return m
    return 1 - (1 - m) * (1 - s)


def values(default: str = "weak", test: str = "strong") -> dict[tuple[str, ...], float]:
    """v(S) for every coalition S (the slots on ``test``), both modules on."""
    out: dict[tuple[str, ...], float] = {}
    for k in range(len(SLOTS) + 1):
        for coalition in itertools.combinations(SLOTS, k):
            probs = {
                m: probability(BUILTIN.get(test if m in coalition else default), m) for m in SLOTS
            }
            out[coalition] = success(probs["manager"], probs["solver"])
    return out


def shapley(v: dict[tuple[str, ...], float]) -> dict[str, float]:
    """Exact Shapley values of the game ``v`` over SLOTS."""
    n = len(SLOTS)
    phi = dict.fromkeys(SLOTS, 0.0)
    for coalition, value in v.items():
        for slot in SLOTS:
            if slot in coalition:
                continue
            with_slot = tuple(s for s in SLOTS if s in coalition or s == slot)
            k = len(coalition)
            weight = math.factorial(k) * math.factorial(n - k - 1) / math.factorial(n)
            phi[slot] += weight * (v[with_slot] - value)
    return phi


if __name__ == "__main__":
    v = values()
    for coalition, value in v.items():
        print(f"v({{{','.join(coalition)}}}) = {value:.4f}")
    for slot, value in shapley(v).items():
        print(f"phi[{slot}] = {value:.4f}")
