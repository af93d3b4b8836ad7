"""The exact v(S) of agent.py under the simulator's generic gateway model.

Each call of a module is right with the probability its model's skill gives
(agentbus/sim/gateway_model.py: planner -> planning, solver -> reasoning,
critic -> reflection; ``base`` of that skill), independently of every other
call, and two wrong answers never agree. So v(S) follows from agent.py's
logic alone: :func:`logic` below is that logic, call for call, and
:mod:`agentbus.sim.gateway_truth` enumerates every sequence of right and
wrong calls it can make, exactly (no closed form to get wrong). For the
record, with ROUNDS = R, p = planner, s = solver, c = critic it comes to
``1 - (1 - s c)^R + (1 - s c)^R p``: a round confirms an answer only when
solver and critic are both right, else the planner's guess is returned.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from agentbus.sim import gateway_truth

SLOTS = ("planner", "solver", "critic")
ROUNDS = 2


def logic(ask: Callable[[str], str], rounds: int = ROUNDS) -> str | None:
    """agent.py's ``solve`` with every module on: ``ask(module)`` is one call's answer."""
    guess = ask("planner")
    answer = ask("solver")
    for attempt in range(1, rounds + 1):
        if ask("critic") == answer:
            return answer
        if attempt < rounds:
            answer = ask("solver")
    return guess


def success(p: float, s: float, c: float, rounds: int = ROUNDS) -> float:
    """P(the agent's answer is right) with the three modules' P(right call)."""
    probs = {"planner": p, "solver": s, "critic": c}
    return gateway_truth.success(lambda ask: logic(ask, rounds), probs)


# v(S) for every coalition (the slots on ``test``, the rest on ``default``) and
# the exact Shapley values over SLOTS: the shared enumeration bound to this logic.
values = functools.partial(gateway_truth.values, logic, SLOTS)
shapley = functools.partial(gateway_truth.shapley, slots=SLOTS)


if __name__ == "__main__":
    gateway_truth.print_table(values(), SLOTS)
