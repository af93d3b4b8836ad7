"""program.py with typed DSPy fields: floats, a flag, a list, an enum and a nested model.

The same three modules and the same vote as program.py (so ``truth.py``
gives this program's v(S) too), but each signature's outputs are typed the
way a DSPy user types them:

  planner (``dspy.Predict``): question -> plan (str), estimate (float), hard (bool)
  solver  (``dspy.ChainOfThought``): question, plan -> steps (list[str]),
          operation (Literal[...]), answer (float)
  critic  (``dspy.Predict``): question, proposed_answer (float) -> check (Check:
          a pydantic model with ``answer: float`` and ``agrees: bool``)

DSPy parses each output into its type and fails the call when a field does
not parse (``AdapterParseError``), so every field of every answer must be
well-formed, not only the answer. The vote compares the numbers.

Only the signatures and how a value is read differ (``TypedProgram``
subclasses program.py's ``Program``). Run it as program.py is run, with
``typed`` in place of ``program``:

  python -m agentbus.run --agent examples.dspy.typed:run \
      --dataset examples/dspy/tasks.jsonl --slots planner,solver,critic
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Literal

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import

import dspy
from pydantic import BaseModel

try:  # in process: examples.dspy.typed; as a command: python examples/dspy/typed.py
    from examples.dspy import program
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import program  # type: ignore[no-redef]


class Plan(dspy.Signature):
    """Plan how to solve the arithmetic problem and give a quick estimate of the result."""

    question: str = dspy.InputField()
    plan: str = dspy.OutputField()
    hard: bool = dspy.OutputField(desc="whether the problem needs more than two steps")
    estimate: float = dspy.OutputField(desc="the number only")


class Solve(dspy.Signature):
    """Solve the arithmetic problem, following the plan when there is one."""

    question: str = dspy.InputField()
    plan: str = dspy.InputField()
    steps: list[str] = dspy.OutputField(desc="the steps taken, one a line")
    operation: Literal["add", "subtract", "multiply", "divide", "mixed"] = dspy.OutputField()
    answer: float = dspy.OutputField(desc="the number only")


class Checked(BaseModel):
    answer: float
    agrees: bool


class Check(dspy.Signature):
    """Work the problem out on your own and say whether the proposed answer is right."""

    question: str = dspy.InputField()
    proposed_answer: float = dspy.InputField()
    check: Checked = dspy.OutputField()


def number(value: float) -> str:
    """A vote's key: 1014.0 and 1014 are one vote."""
    return f"{value:g}" if abs(value) < 1e15 else repr(value)


class TypedProgram(program.Program):
    signatures = (Plan, Solve, Check)

    def estimate(self, planned: dspy.Prediction) -> str:
        return number(planned.estimate)

    def answer(self, solved: dspy.Prediction) -> str:
        return number(solved.answer)

    def checked(self, checked: dspy.Prediction) -> str:
        return number(checked.check.answer)

    def proposed(self, solved: dspy.Prediction) -> Any:
        return solved.answer  # a float, as Check's input field is


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """In process: ``python -m agentbus.run --agent examples.dspy.typed:run``."""
    return await program.solve(task, ctx.base_url, ctx.api_key, set(ctx.off_slots), TypedProgram)


if __name__ == "__main__":
    program.main(TypedProgram)
