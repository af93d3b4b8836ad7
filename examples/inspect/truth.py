"""The exact v(S) of arithmetic.py's solver on the simulator's generic gateway model.

The solver's logic is examples/plain_openai/agent.py's, call for call
(planner guess, solver answer, up to two critic rounds, the planner's guess
when no round confirms), and each role's call is right with its model's
skill for that module name (planner -> planning, solver -> reasoning, critic
-> reflection), independently. So v(S) and the exact Shapley values are
that example's: this file loads its truth.py rather than a copy of it.

``python examples/inspect/truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PLAIN = Path(__file__).resolve().parents[1] / "plain_openai" / "truth.py"
_spec = importlib.util.spec_from_file_location("plain_openai_truth", _PLAIN)
assert _spec is not None and _spec.loader is not None
_plain = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_plain)

SLOTS = _plain.SLOTS
logic = _plain.logic
success = _plain.success
values = _plain.values
shapley = _plain.shapley

if __name__ == "__main__":
    _plain.gateway_truth.print_table(values(), SLOTS)
