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

Run it as program.py is run, with ``typed`` in place of ``program``:

  python -m agentbus.run --agent examples.dspy.typed:run \
      --dataset examples/dspy/tasks.jsonl --slots planner,solver,critic
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from typing import Any, Literal

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import

import dspy
from pydantic import BaseModel


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


def model(module: str, base_url: str, api_key: str) -> dspy.LM:
    """The LM of one module: the gateway, by module name, with DSPy's cache off."""
    return dspy.LM(
        f"openai/{module}",
        api_base=base_url,
        api_key=api_key,
        cache=False,
        temperature=0.0,
        max_tokens=1024,
        num_retries=0,
    )


def number(value: float) -> str:
    """A vote's key: 1014.0 and 1014 are one vote."""
    return f"{value:g}" if abs(value) < 1e15 else repr(value)


class Program(dspy.Module):
    def __init__(self, base_url: str, api_key: str, off: set[str]) -> None:
        super().__init__()
        self.off = off
        self.planner = dspy.Predict(Plan)
        self.solver = dspy.ChainOfThought(Solve)
        self.critic = dspy.Predict(Check)
        for name in ("planner", "solver", "critic"):
            getattr(self, name).set_lm(model(name, base_url, api_key))

    async def aforward(self, question: str) -> dspy.Prediction:
        plan, votes = "(no plan)", []
        if "planner" not in self.off:
            planned = await self.planner.acall(question=question)
            plan = planned.plan
            votes.append(number(planned.estimate))
        solved = await self.solver.acall(question=question, plan=plan)
        answer = number(solved.answer)
        votes.append(answer)
        if "critic" not in self.off:
            checked = await self.critic.acall(question=question, proposed_answer=solved.answer)
            votes.append(number(checked.check.answer))
        value, count = Counter(votes).most_common(1)[0]
        return dspy.Prediction(answer=value if count >= 2 else answer, votes=votes)


async def solve(task: dict[str, Any], base_url: str, api_key: str, off: set[str]) -> dict[str, Any]:
    result = await Program(base_url, api_key, off).acall(question=task["question"])
    return {"answer": result.answer, "votes": result.votes}


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """In process: ``python -m agentbus.run --agent examples.dspy.typed:run``."""
    return await solve(task, ctx.base_url, ctx.api_key, set(ctx.off_slots))


def main() -> None:
    task = json.load(sys.stdin)
    off = {s for s in os.environ.get("AGENTBUS_OFF_SLOTS", "").split(",") if s}
    base, key = os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
    print(json.dumps(asyncio.run(solve(task, base, key, off))))


if __name__ == "__main__":
    main()
