"""A DSPy program: a planner, a chain-of-thought solver and a critic, then a vote.

Three DSPy modules, each with its own ``dspy.LM`` named after its module:

  planner (``dspy.Predict``: question -> plan, estimate)
  solver  (``dspy.ChainOfThought``: question, plan -> answer)
  critic  (``dspy.Predict``: question, proposed_answer -> answer, worked out anew)

The program returns the value at least two of them give (the planner's
estimate, the solver's answer, the critic's answer); with no two agreeing,
the solver's. A module that agentbus switched off is left out (no planner:
the solver gets no plan; no critic: nothing to vote with).

Nothing here knows about agentbus. Two settings matter for any DSPy program
run through it:

* the model is ``openai/<module>`` with ``api_base`` (LiteLLM's name for the
  base URL) set to the gateway: the ``openai/`` prefix tells LiteLLM to speak
  the OpenAI API to whatever ``api_base`` names;
* ``cache=False``: DSPy caches answers by model name and prompt, and the
  model name (``openai/solver``) is the same in every coalition, so its
  cache would hand one coalition's answers to another. agentbus's own cache
  shares exactly the calls that are the same.

Run it as a command (``--agent-cmd "python examples/dspy/program.py"``: task
JSON on stdin, one result JSON line on stdout; ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` in the environment) or in process
(``--agent examples.dspy.program:run``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import

import dspy


class Plan(dspy.Signature):
    """Plan how to solve the arithmetic problem and give a quick estimate of the result."""

    question: str = dspy.InputField()
    plan: str = dspy.OutputField()
    estimate: str = dspy.OutputField(desc="the number only")


class Solve(dspy.Signature):
    """Solve the arithmetic problem, following the plan when there is one."""

    question: str = dspy.InputField()
    plan: str = dspy.InputField()
    answer: str = dspy.OutputField(desc="the number only")


class Check(dspy.Signature):
    """Work the problem out on your own and give the correct result."""

    question: str = dspy.InputField()
    proposed_answer: str = dspy.InputField()
    answer: str = dspy.OutputField(desc="the number only")


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


class Program(dspy.Module):
    """The three modules and the vote; subclasses change the signatures and how values read."""

    signatures: tuple[type[dspy.Signature], ...] = (Plan, Solve, Check)

    def __init__(self, base_url: str, api_key: str, off: set[str]) -> None:
        super().__init__()
        self.off = off
        plan, solve, check = self.signatures
        self.planner = dspy.Predict(plan)
        self.solver = dspy.ChainOfThought(solve)
        self.critic = dspy.Predict(check)
        for name in ("planner", "solver", "critic"):
            getattr(self, name).set_lm(model(name, base_url, api_key))

    def estimate(self, planned: dspy.Prediction) -> str:
        return str(planned.estimate).strip()

    def answer(self, solved: dspy.Prediction) -> str:
        return str(solved.answer).strip()

    def checked(self, checked: dspy.Prediction) -> str:
        return str(checked.answer).strip()

    def proposed(self, solved: dspy.Prediction) -> Any:
        """What the critic is shown: the solver's answer as its input field's type."""
        return self.answer(solved)

    async def aforward(self, question: str) -> dspy.Prediction:
        plan, votes = "(no plan)", []
        if "planner" not in self.off:
            planned = await self.planner.acall(question=question)
            plan = planned.plan
            votes.append(self.estimate(planned))
        solved = await self.solver.acall(question=question, plan=plan)
        answer = self.answer(solved)
        votes.append(answer)
        if "critic" not in self.off:
            shown = self.proposed(solved)
            checked = await self.critic.acall(question=question, proposed_answer=shown)
            votes.append(self.checked(checked))
        value, count = Counter(votes).most_common(1)[0]
        return dspy.Prediction(answer=value if count >= 2 else answer, votes=votes)


async def solve(
    task: dict[str, Any], base_url: str, api_key: str, off: set[str], kind: type[Program] = Program
) -> dict[str, Any]:
    result = await kind(base_url, api_key, off).acall(question=task["question"])
    return {"answer": result.answer, "votes": result.votes}


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """In process: ``python -m agentbus.run --agent examples.dspy.program:run``."""
    return await solve(task, ctx.base_url, ctx.api_key, set(ctx.off_slots))


def main(kind: type[Program] = Program) -> None:
    task = json.load(sys.stdin)
    off = {s for s in os.environ.get("AGENTBUS_OFF_SLOTS", "").split(",") if s}
    base, key = os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
    print(json.dumps(asyncio.run(solve(task, base, key, off, kind))))


if __name__ == "__main__":
    main()
