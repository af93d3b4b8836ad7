"""A pydantic-ai app: a planner that delegates to a solver, and a critic that checks the result.

Three pydantic-ai ``Agent`` objects, each on its own model name, each with a
typed output (pydantic-ai asks the model for it through its output tool,
``final_result``, and validates the arguments):

  planner (model "planner", tool delegate_to_solver) -> Answer(answer: float, steps: list[str])
  solver  (model "solver", tool calculate)           -> Solution(answer: float, confident: bool)
  critic  (model "critic")                           -> Check(answer: float, verdict: Literal)

The planner hands the problem to the solver through a tool (pydantic-ai's
agent delegation: the tool runs the solver agent and returns its
``Solution``) and then gives its own typed answer. The critic then works the
problem out on its own: the app accepts the planner's answer only when the
critic's number agrees with it (a cross-check), and otherwise answers that
there is no agreed answer. A module that agentbus switched off is left out:
no solver, the planner has no delegation tool and answers alone; no planner,
the solver runs as the top agent; no critic, the proposal stands (and with
neither planner nor solver, the critic's answer).

Nothing here knows about agentbus: each agent's model is an
``OpenAIChatModel`` named after its module, on an OpenAI-compatible provider
whose base URL is the gateway. ``truth.py`` has the exact v(S) on the
simulator.

Run it as a command (``--agent-cmd "python examples/pydantic_ai/agent.py"``:
task JSON on stdin, one result JSON line on stdout; ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` in the environment) or in process
(``--agent examples.pydantic_ai.agent:run``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Literal

from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent, RunContext, ToolDefinition
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider


class Answer(BaseModel):
    """The planner's typed answer."""

    answer: float
    steps: list[str]


class Solution(BaseModel):
    """The solver's typed answer."""

    answer: float
    confident: bool


class Check(BaseModel):
    """The critic's own answer and its verdict on the proposal."""

    answer: float
    verdict: Literal["accept", "reject"]


@dataclass
class Episode:
    """What one episode's agents share: the gateway provider, the modules that are off."""

    provider: OpenAICompatibleProvider
    off: frozenset[str]
    reports: list[Solution] = field(default_factory=list)

    def model(self, module: str) -> OpenAIChatModel:
        """The model of ``module``: its name is the module agentbus swaps per coalition."""
        return OpenAIChatModel(module, provider=self.provider)


solver = Agent(
    output_type=Solution,
    deps_type=Episode,
    name="solver",
    instructions="Solve the arithmetic problem exactly. Use the calculate tool for the arithmetic.",
)
planner = Agent(
    output_type=Answer,
    deps_type=Episode,
    name="planner",
    instructions=(
        "Plan how to solve the arithmetic problem in a few steps, hand it to the solver if "
        "you can, check its report, and give the answer."
    ),
)
critic = Agent(
    output_type=Check,
    deps_type=Episode,
    name="critic",
    instructions=(
        "A colleague proposed an answer to the problem below. Solve the problem yourself, "
        "without trusting the proposal, and say whether you accept it."
    ),
)


@solver.tool_plain
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression of numbers, + - * / and parentheses.

    Args:
        expression: the expression, for example '(3 + 4) * 5'.
    """
    if not expression.strip() or set(expression) - set("0123456789+-*/(). "):
        raise ValueError(f"not an arithmetic expression: {expression!r}")
    return str(eval(expression, {"__builtins__": {}}, {}))


async def _if_solver_on(ctx: RunContext[Episode], tool: ToolDefinition) -> ToolDefinition | None:
    """Offer the delegation tool only when the solver module is on."""
    return None if "solver" in ctx.deps.off else tool


@planner.tool(prepare=_if_solver_on)
async def delegate_to_solver(ctx: RunContext[Episode], task: str) -> Solution:
    """Hand the problem to the solver agent; returns its solution.

    Args:
        task: the problem, as the solver should see it.
    """
    result = await solver.run(task, model=ctx.deps.model("solver"), deps=ctx.deps, usage=ctx.usage)
    ctx.deps.reports.append(result.output)
    return result.output


async def solve(task: dict[str, Any], episode: Episode) -> dict[str, Any]:
    """One task: the proposal (planner, else solver), then the critic's check."""
    question = task["question"]
    proposal: float | None = None
    if "planner" not in episode.off:
        planned = await planner.run(question, model=episode.model("planner"), deps=episode)
        proposal = planned.output.answer
    elif "solver" not in episode.off:
        solved = await solver.run(question, model=episode.model("solver"), deps=episode)
        episode.reports.append(solved.output)
        proposal = solved.output.answer
    report = episode.reports[-1].answer if episode.reports else None
    out: dict[str, Any] = {"proposal": proposal, "solver": report}
    if "critic" in episode.off:
        return {"answer": proposal, **out}
    shown = "none" if proposal is None else f"{proposal:g}"
    checked = await critic.run(
        f"{question}\nProposed answer: {shown}", model=episode.model("critic"), deps=episode
    )
    check = checked.output
    out.update(critic=check.answer, verdict=check.verdict)
    if proposal is None:  # nothing proposed: the critic's own answer
        return {"answer": check.answer, **out}
    return {"answer": proposal if check.answer == proposal else "no agreed answer", **out}


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """agentbus's in-process entry point: ``--agent examples.pydantic_ai.agent:run``.

    The episode's own client (``ctx.openai``, with its token) goes into the
    provider, so thousands of episodes share the process without sharing a key.
    """
    provider = OpenAICompatibleProvider("agentbus", openai_client=ctx.openai)
    return await solve(task, Episode(provider, frozenset(ctx.off_slots)))


async def main() -> None:
    """The command entry point: task JSON on stdin, one result JSON line on stdout."""
    task = json.loads(sys.stdin.read())
    off = frozenset(s for s in os.environ.get("AGENTBUS_OFF_SLOTS", "").split(",") if s)
    client = AsyncOpenAI(
        base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
    )
    provider = OpenAICompatibleProvider("agentbus", openai_client=client)
    result = await solve(task, Episode(provider, off))
    await client.close()
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
