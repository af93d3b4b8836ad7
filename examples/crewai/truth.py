"""The exact v(S) of crew.py under the simulator's generic gateway model.

Each agent's call is right with its model's skill for its module name
(agentbus/sim/gateway_model.py: solver -> reasoning, reviewer -> reflection;
``base`` of that skill), independently, and two wrong answers never agree.
crew.py accepts the crew's answer only when the two agents' numbers agree,
so with s = solver, r = reviewer:

* both on: right when both are right, ``s * r``;
* no reviewer: the solver alone, ``s``; no solver: the reviewer alone, ``r``.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from agentbus.sim import gateway_truth

SLOTS = ("solver", "reviewer")


def logic(ask: Callable[[str], str], off: frozenset[str] = frozenset()) -> str | None:
    """crew.py: each agent answers once; two answers must agree."""
    solved = ask("solver") if "solver" not in off else None
    reviewed = ask("reviewer") if "reviewer" not in off else None
    if solved is None or reviewed is None:
        return solved if reviewed is None else reviewed
    return solved if solved == reviewed else None


values = functools.partial(gateway_truth.values, logic, SLOTS)
shapley = functools.partial(gateway_truth.shapley, slots=SLOTS)


if __name__ == "__main__":
    gateway_truth.print_table(values(), SLOTS)
