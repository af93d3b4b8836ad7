"""MMAU's two-stage agent: a planner writes a strategy, a solver carries it out.

MMAU separates planning from problem solving by splitting the answer into two
stages and swapping the model of one stage at a time (planner-shift: every
planner with one fixed solver; solver-shift: one fixed planner, every solver).
Here each stage is a slot, so the same split is a 2-slot coalition game and
the presets in :mod:`modules.mmau.presets` run it on math.
"""

from __future__ import annotations

SLOTS: tuple[str, ...] = ("planner", "solver")

AGENT: dict[str, str] = {"planner": "mmau.planner", "solver": "mmau.solver"}

__all__ = ["AGENT", "SLOTS"]
