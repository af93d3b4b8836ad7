"""The exact v(S) of agent.py under the simulator's generic gateway model.

Each agent's answer is right with the probability its model's skill gives
(agentbus/sim/gateway_model.py: planner -> planning, solver -> reasoning,
critic -> reflection; ``base`` of that skill), independently of the others,
two wrong answers never agree, and every handoff is taken (the model calls
each offered handoff once). So v(S) follows from agent.py's logic alone:
:func:`logic` below is the chain and its vote, and
:mod:`agentbus.sim.gateway_truth` enumerates every sequence of right and
wrong answers exactly. For the record, with p = planner, s = solver,
c = critic it comes to ``s + (1 - s) p c`` with all three on (the solver
stands unless two others agree against it, which only two right answers
can), and ``s`` when the planner or the critic is switched off.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable

from agentbus.sim import gateway_truth

SLOTS = ("planner", "solver", "critic")


def logic(ask: Callable[[str], str], off: frozenset[str] = frozenset()) -> str | None:
    """agent.py's chain (planner -> solver -> critic) and its ``vote``."""
    answers = {m: ask(m) for m in SLOTS if m not in off}
    value, n = Counter(answers.values()).most_common(1)[0]
    return value if n >= 2 else answers["solver"]


def success(p: float | None, s: float, c: float | None) -> float:
    """P(the voted answer is right); ``None`` for a module that is switched off."""
    off = frozenset(m for m, x in (("planner", p), ("critic", c)) if x is None)
    probs = {"planner": p or 0.0, "solver": s, "critic": c or 0.0}
    return gateway_truth.success(lambda ask: logic(ask, off), probs)


# v(S) for every coalition (the slots on ``test``, the rest on ``default``) and
# the exact Shapley values over SLOTS: the shared enumeration bound to this logic.
values = functools.partial(gateway_truth.values, logic, SLOTS)
shapley = functools.partial(gateway_truth.shapley, slots=SLOTS)


if __name__ == "__main__":
    gateway_truth.print_table(values(), SLOTS)
