"""The exact v(S) of agent.py under the simulator's generic gateway model.

Each call of a module is right with the probability its model's skill gives
(agentbus/sim/gateway_model.py: manager -> planning, solver -> reasoning;
``base`` of that skill), independently of every other call, and two wrong
answers never agree. With m = manager, s = solver, following agent.py and
the generic model's rule for a module offered a worker (**Workers**: right,
it answers right; wrong, it repeats what its worker reported; :func:`logic`,
enumerated exactly by :mod:`agentbus.sim.gateway_truth`; for the record):

* both on: the manager's final answer is right when the manager is right,
  or when it is wrong and repeats a right report: ``1 - (1 - m)(1 - s)``;
* no solver: the manager alone, ``m``;
* no manager: the solver alone, ``s``.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from agentbus.sim import gateway_truth

SLOTS = ("manager", "solver")


def logic(ask: Callable[[str], str], off: frozenset[str] = frozenset()) -> str | None:
    """agent.py: the manager delegates to the solver, then answers (repeating it when wrong)."""
    report = ask("solver") if "solver" not in off else None
    if "manager" in off:
        return report
    own = ask("manager")
    if own == gateway_truth.RIGHT or report is None:
        return own
    return report


def success(m: float | None, s: float | None) -> float:
    """P(the final answer is right); ``None`` for a module that is switched off."""
    off = frozenset(n for n, x in (("manager", m), ("solver", s)) if x is None)
    if len(off) == 2:
        return 0.0
    probs = {"manager": m or 0.0, "solver": s or 0.0}
    return gateway_truth.success(lambda ask: logic(ask, off), probs)


# v(S) for every coalition (the slots on ``test``, the rest on ``default``) and
# the exact Shapley values over SLOTS: the shared enumeration bound to this logic.
values = functools.partial(gateway_truth.values, logic, SLOTS)
shapley = functools.partial(gateway_truth.shapley, slots=SLOTS)


if __name__ == "__main__":
    gateway_truth.print_table(values(), SLOTS)
