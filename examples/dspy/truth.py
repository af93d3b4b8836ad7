"""The exact v(S) of program.py under the simulator's generic gateway model.

Each call of a module is right with the probability its model's skill gives
(agentbus/sim/gateway_model.py: planner -> planning, solver -> reasoning,
critic -> reflection; ``base`` of that skill), independently of every other
call, and two wrong answers never agree. The simulated model writes DSPy's
``[[ ## field ## ]]`` sections (the planner's ``estimate``, the solver's and
the critic's ``answer`` carry the value). With p = planner, s = solver,
c = critic, following program.py's vote (:func:`logic`, enumerated exactly
by :mod:`agentbus.sim.gateway_truth`; for the record):

* all three on: the solver's answer stands unless planner and critic agree
  against it, which two answers do only when both are right:
  ``s + (1 - s) * p * c``;
* planner or critic off: two votes agree only when both are right, else the
  solver's answer stands: ``s``.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable

from agentbus.sim import gateway_truth

SLOTS = ("planner", "solver", "critic")
ROUNDS = 2


def logic(ask: Callable[[str], str], off: frozenset[str] = frozenset()) -> str | None:
    """program.py: the planner's estimate, the solver's and the critic's answers, voted."""
    answers = {m: ask(m) for m in SLOTS if m not in off}
    value, n = Counter(answers.values()).most_common(1)[0]
    return value if n >= 2 else answers["solver"]


def success(p: float | None, s: float, c: float | None) -> float:
    """P(the program's answer is right); ``None`` for a module that is switched off."""
    off = frozenset(m for m, x in (("planner", p), ("critic", c)) if x is None)
    probs = {"planner": p or 0.0, "solver": s, "critic": c or 0.0}
    return gateway_truth.success(lambda ask: logic(ask, off), probs)


# v(S) for every coalition (the slots on ``test``, the rest on ``default``) and
# the exact Shapley values over SLOTS: the shared enumeration bound to this logic.
values = functools.partial(gateway_truth.values, logic, SLOTS)
shapley = functools.partial(gateway_truth.shapley, slots=SLOTS)


if __name__ == "__main__":
    gateway_truth.print_table(values(), SLOTS)
