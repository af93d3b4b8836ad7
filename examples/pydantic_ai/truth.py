"""The exact v(S) of agent.py under the simulator's generic gateway model.

Each module's typed answer (the value in its ``final_result`` call) is right
with its model's skill for its name (agentbus/sim/gateway_model.py:
planner -> planning, solver -> reasoning, critic -> reflection; ``base`` of
that skill), independently of every other call, and two wrong answers never
agree. The planner is offered the solver as a worker (a delegation tool), so
by the generic model's **Workers** rule it answers right when it is right,
and repeats the solver's reported number when it is wrong. The solver's
calculator call and the planner's delegation call carry no answer the app
reads. Then agent.py's own rule: the proposal stands only when the critic's
own number agrees with it. :func:`logic` is that, enumerated exactly by
:mod:`agentbus.sim.gateway_truth`; for the record, with p = planner,
s = solver, c = critic:

* all on: ``(1 - (1 - p)(1 - s)) c``: the planner proposes a right number
  when it is right or when it relays a right report, and a right critic
  agrees with it (two wrong numbers never agree);
* no critic: the proposal, ``1 - (1 - p)(1 - s)``;
* no planner: ``s c``; no solver: ``p c``.

So the relay shows: a planner that ignored its worker would give ``p c``
with all three on (0.315 against 0.871 with the solver and the critic on
the strong model).

``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from agentbus.sim import gateway_truth

SLOTS = ("planner", "solver", "critic")


def logic(ask: Callable[[str], str], off: frozenset[str] = frozenset()) -> str | None:
    """agent.py: delegation (solver, then planner), then the critic's check."""
    report = ask("solver") if "solver" not in off else None
    proposal = report
    if "planner" not in off:
        own = ask("planner")
        proposal = own if own == gateway_truth.RIGHT or report is None else report
    if "critic" in off:
        return proposal
    check = ask("critic")
    if proposal is None:
        return check
    return proposal if check == proposal else None


values = functools.partial(gateway_truth.values, logic, SLOTS)
shapley = functools.partial(gateway_truth.shapley, slots=SLOTS)


def success(p: float | None, s: float, c: float | None) -> float:
    """P(the final answer is right); ``None`` for a module that is switched off."""
    off = frozenset(m for m, x in (("planner", p), ("critic", c)) if x is None)
    probs = {"planner": p or 0.0, "solver": s, "critic": c or 0.0}
    return gateway_truth.success(lambda ask: logic(ask, off), probs)


if __name__ == "__main__":
    gateway_truth.print_table(values(), SLOTS)
