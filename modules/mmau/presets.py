"""MMAU's planner-shift and solver-shift as presets (``--preset mmau-planner-shift``).

Both run the two-stage agent on math as a 2-slot game (planner, solver). The
shifted stage takes the default model on one side and each test column's
model on the other; the held stage is pinned by ``vary`` to a named model on
its test side (``on:@sim:strong``: the agent's own module, on the run's
default model as the default variant and on ``sim:strong`` as the test
variant, whatever the column). ``shift`` asks for MMAU's table: the pass rate
per model of the shifted stage with the other stage on its held model. The
Shapley values of both stages come with it.

The test columns are chosen so the table teaches something on the simulator:
``sim:strong-planning`` plans like ``sim:strong`` and does everything else
like ``sim:weak``; the solver answers with the reasoning skill
(``agentbus.ROLE_SKILLS``), so ``sim:strong-reasoning`` solves like
``sim:strong``.
"""

from __future__ import annotations

from typing import Any

#: the model the held stage runs on (MMAU holds it on a strong model)
HELD = "sim:strong"


def _shift(stage: str, held: str, skill: str) -> dict[str, Any]:
    """The preset that shifts ``stage`` while ``held`` runs on :data:`HELD`.

    ``skill`` names the profile that is strong in the shifted stage's skill only.
    """
    return {
        "agent": "mmau",
        "env": "math",
        "slots": ["planner", "solver"],
        "default": "sim:weak",
        "test": ["sim:strong", f"sim:strong-{skill}"],
        "vary": {held: f"on:@{HELD}"},
        "shift": stage,
    }


PLANNER_SHIFT = _shift("planner", held="solver", skill="planning")
SOLVER_SHIFT = _shift("solver", held="planner", skill="reasoning")

__all__ = ["HELD", "PLANNER_SHIFT", "SOLVER_SHIFT"]
