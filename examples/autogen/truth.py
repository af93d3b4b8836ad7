"""The exact v(S) of team.py under the simulator's generic gateway model.

Each agent's answer is right with its model's skill for its module name
(agentbus/sim/gateway_model.py: planner -> planning, solver -> reasoning,
critic -> reflection; ``base`` of that skill), independently of every other
call, and two wrong answers never agree. The solver makes two calls (the
calculator call, then its reflection on the result); the app reads the
reflection's answer, one draw like any other. The critic's typed
``Review`` carries its answer in ``answer``. team.py then votes: the value
at least two agents give, else the last speaker's. :func:`logic` is that,
enumerated exactly by :mod:`agentbus.sim.gateway_truth`; for the record,
with p = planner, s = solver, c = critic and all three on, the team is right
when at least two are, or when only the critic is:
``ps + pc + sc - 2psc + (1 - p)(1 - s)c``.

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable

from agentbus.sim import gateway_truth

SLOTS = ("planner", "solver", "critic")


def logic(ask: Callable[[str], str], off: frozenset[str] = frozenset()) -> str | None:
    """team.py: each agent on speaks once, in turn; then the vote, ties to the last speaker."""
    on = [m for m in SLOTS if m not in off]
    if not on:
        return None
    answers = {m: ask(m) for m in on}
    value, n = Counter(answers.values()).most_common(1)[0]
    return value if n >= 2 else answers[on[-1]]


def success(p: float | None, s: float | None, c: float | None) -> float:
    """P(the team's answer is right); ``None`` for a module that is switched off."""
    given = {"planner": p, "solver": s, "critic": c}
    off = frozenset(m for m, x in given.items() if x is None)
    probs = {m: x or 0.0 for m, x in given.items()}
    return gateway_truth.success(lambda ask: logic(ask, off), probs)


values = functools.partial(gateway_truth.values, logic, SLOTS)
shapley = functools.partial(gateway_truth.shapley, slots=SLOTS)


if __name__ == "__main__":
    gateway_truth.print_table(values(), SLOTS)
