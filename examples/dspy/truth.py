"""The exact v(S) of program.py under the simulator's generic gateway model.

Each call of a module is right with the probability its model's skill gives
(agentbus/sim/gateway_model.py: planner -> planning, solver -> reasoning,
critic -> reflection; ``base`` of that skill), independently of every other
call, and two wrong answers never agree. The simulated model writes DSPy's
``[[ ## field ## ]]`` sections (the planner's ``estimate``, the solver's and
the critic's ``answer`` carry the value). With p = planner, s = solver,
c = critic, following program.py's vote:

* all three on: the solver's answer stands unless planner and critic agree
  against it, which two answers do only when both are right:
  ``s + (1 - s) * p * c``;
* planner or critic off: two votes agree only when both are right, else the
  solver's answer stands: ``s``.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import itertools
import math

from agentbus.sim.gateway_model import probability
from agentbus.sim.profiles import BUILTIN

SLOTS = ("planner", "solver", "critic")
ROUNDS = 2


def success(p: float | None, s: float, c: float | None) -> float:
    """P(the program's answer is right); ``None`` for a module that is switched off."""
    if p is None or c is None:
        return s
    return s + (1 - s) * p * c


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
