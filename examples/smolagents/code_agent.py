"""The smolagents app of agent.py with ``CodeAgent``s: the model acts by writing Python.

  manager (CodeAgent, model "manager")  --managed agent-->  solver (CodeAgent, model
  "solver", tool: calculator)

A ``CodeAgent`` offers the model no functions: its prompt lists the tools
and the managed agents as Python signatures and asks for one block of code
per step, which smolagents runs; the agent ends when the code calls
``final_answer(...)``. The manager's code calls ``solver(task=...)``, reads
the report and answers; the solver's code calls the calculator, then
answers. The calculator raises on anything that is not arithmetic, as a
real tool does: smolagents shows the model the error and it goes on.

The logic is agent.py's (the manager delegates, then answers), so
``truth.py`` gives this app's v(S) too. Run it as agent.py is run, with
``code_agent`` in place of ``agent``:

  python -m agentbus.run --agent examples.smolagents.code_agent:run \
      --dataset examples/smolagents/tasks.jsonl --slots manager,solver
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
from smolagents import CodeAgent, OpenAIServerModel, tool

#: threads for in-process episodes (smolagents blocks on its HTTP calls)
POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="smolagents-code")
#: one HTTP client for every episode's models
HTTP = openai.DefaultHttpxClient()


@tool
def calculator(expression: str) -> str:
    """Evaluates an arithmetic expression of numbers, + - * / and parentheses.

    Args:
        expression: the expression, for example '(3 + 4) * 5'.
    """
    if not expression.strip() or set(expression) - set("0123456789+-*/(). "):
        raise ValueError(f"not an arithmetic expression: {expression!r}")
    return str(eval(expression, {"__builtins__": {}}, {}))


def build(base_url: str, api_key: str, off: set[str]) -> CodeAgent:
    """The agent tree for one episode, without the modules agentbus switched off."""

    def model(name: str) -> OpenAIServerModel:
        return OpenAIServerModel(
            model_id=name,
            api_base=base_url,
            api_key=api_key,
            client_kwargs={"max_retries": 0, "http_client": HTTP},
        )

    solver = CodeAgent(
        tools=[calculator],
        model=model("solver"),
        name="solver",
        description="Solves an arithmetic word problem and reports the number.",
        max_steps=4,
        verbosity_level=0,
    )
    if "manager" in off:
        return solver
    return CodeAgent(
        tools=[],
        model=model("manager"),
        managed_agents=[] if "solver" in off else [solver],
        max_steps=4,
        verbosity_level=0,
    )


def solve(task: dict[str, Any], base_url: str, api_key: str, off: set[str]) -> dict[str, Any]:
    answer = build(base_url, api_key, off).run(task["question"])
    return {"answer": str(answer).strip()}


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """In process: one episode in a thread of this module's pool."""
    loop = asyncio.get_running_loop()
    off = set(ctx.off_slots)
    return await loop.run_in_executor(POOL, solve, task, ctx.base_url, ctx.api_key, off)


def main() -> None:
    task = json.load(sys.stdin)
    off = {s for s in os.environ.get("AGENTBUS_OFF_SLOTS", "").split(",") if s}
    result = solve(task, os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"], off)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
