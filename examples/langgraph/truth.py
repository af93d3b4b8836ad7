"""The exact v(S) of graph.py under the simulator's generic gateway model.

Each call of a module is right with the probability its model's skill gives
(agentbus/sim/gateway_model.py: planner -> planning, solver -> reasoning,
critic -> reflection; ``base`` of that skill), independently of every other
call, and two wrong answers never agree. So v(S) follows from graph.py's
logic alone: :func:`logic` below is the graph's path, node for node, and
:mod:`agentbus.sim.gateway_truth` enumerates every sequence of right and
wrong calls it can take, exactly. For the record, with ROUNDS = R,
p = planner, s = solver, c = critic:

* a right planner estimate (p): a right critic ends the loop on a right
  value (it matches the solver's answer or the estimate); with the critic
  wrong in all R rounds the last solver answer stands:
  ``1 - (1 - c)^R + (1 - c)^R s``;
* a wrong or no estimate: a round ends right only when solver and critic
  are both right; after R rounds without that the last solver answer
  stands: ``1 - (1 - s c)^R + (1 - s c)^(R - 1) s (1 - c)``;
* no critic: the solver's first answer, ``s``.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from agentbus.sim import gateway_truth

SLOTS = ("planner", "solver", "critic")
ROUNDS = 2


def logic(
    ask: Callable[[str], str], rounds: int = ROUNDS, off: frozenset[str] = frozenset()
) -> str | None:
    """graph.py's path: ``ask(module)`` is one call's answer; ``off``: modules switched off."""
    guess = ask("planner") if "planner" not in off else None
    for attempt in range(1, rounds + 1):
        answer = ask("solver")
        if "critic" in off:
            return answer
        check = ask("critic")
        if check == answer:
            return answer
        if check == guess:
            return check
        if attempt >= rounds:
            return answer
    return None


def success(p: float | None, s: float, c: float | None, rounds: int = ROUNDS) -> float:
    """P(the graph's final answer is right); ``None`` for a module that is switched off."""
    off = frozenset(m for m, x in (("planner", p), ("critic", c)) if x is None)
    probs = {"planner": p or 0.0, "solver": s, "critic": c or 0.0}
    return gateway_truth.success(lambda ask: logic(ask, rounds, off), probs)


# v(S) for every coalition (the slots on ``test``, the rest on ``default``) and
# the exact Shapley values over SLOTS: the shared enumeration bound to this logic.
values = functools.partial(gateway_truth.values, logic, SLOTS)
shapley = functools.partial(gateway_truth.shapley, slots=SLOTS)


if __name__ == "__main__":
    gateway_truth.print_table(values(), SLOTS)
