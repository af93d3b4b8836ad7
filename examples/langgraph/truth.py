"""The exact v(S) of graph.py under the simulator's generic gateway model.

Each call of a module is right with the probability its model's skill gives
(agentbus/sim/gateway_model.py: planner -> planning, solver -> reasoning,
critic -> reflection; ``base`` of that skill), independently of every other
call, and two wrong answers never agree. With ROUNDS = R, p = planner,
s = solver, c = critic, following graph.py:

* a right planner estimate (p): each round, a right critic (c) ends the
  loop on a right value (it matches the solver's answer or the estimate);
  with the critic wrong in all R rounds, the last solver answer stands:
  ``1 - (1 - c)^R + (1 - c)^R * s``;
* a wrong or no estimate: a round ends right only when solver and critic
  are both right (s*c); after R rounds without that, the last solver answer
  stands, right when the solver was right and the critic was not:
  ``1 - (1 - s*c)^R + (1 - s*c)^(R - 1) * s * (1 - c)``;
* no critic: the solver's first answer, ``s``.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import itertools
import math

from agentbus.sim.gateway_model import probability
from agentbus.sim.profiles import BUILTIN

SLOTS = ("planner", "solver", "critic")
ROUNDS = 2


def success(p: float | None, s: float, c: float | None, rounds: int = ROUNDS) -> float:
    """P(the graph's final answer is right); ``None`` for a module that is switched off."""
    if c is None:
        return s
    no_estimate = 1 - (1 - s * c) ** rounds + (1 - s * c) ** (rounds - 1) * s * (1 - c)
    if p is None:
        return no_estimate
    right_estimate = 1 - (1 - c) ** rounds + (1 - c) ** rounds * s
    return p * right_estimate + (1 - p) * no_estimate


def values(default: str = "weak", test: str = "strong") -> dict[tuple[str, ...], float]:
    """v(S) for every coalition S (the slots on ``test``), all three modules on."""
    out: dict[tuple[str, ...], float] = {}
    for k in range(len(SLOTS) + 1):
        for coalition in itertools.combinations(SLOTS, k):
            probs = {
                m: probability(BUILTIN.get(test if m in coalition else default), m) for m in SLOTS
            }
            out[coalition] = success(probs["planner"], probs["solver"], probs["critic"])
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
