"""A smolagents app: a manager agent that delegates to a managed solver agent.

Two ``ToolCallingAgent`` objects, each on its own model name:

  manager (model "manager")  --managed agent-->  solver (model "solver", tool: calculator)

The manager is offered the solver as a tool (smolagents' managed agents) and
its own ``final_answer``; it passes the task on, reads the solver's report
and gives the final answer. The solver may use a calculator tool, then
answers with ``final_answer``. The app returns the manager's final answer.
A module that agentbus switched off is left out: no solver, the manager
answers alone; no manager, the solver runs as the top agent.

Nothing here knows about agentbus: the model names are the modules agentbus
swaps per coalition, and ``OpenAIServerModel`` takes the gateway as its
``api_base``. smolagents is synchronous, so in process each episode runs in
a thread of this module's own pool (not the event loop's default executor,
which the run's other work shares).

Run it as a command (``--agent-cmd "python examples/smolagents/agent.py"``:
it answers agentbus's worker handshake, so long-lived workers serve episode
after episode and smolagents is imported once per worker, :func:`serve`;
a process per episode with ``--no-agent-workers``: task JSON on stdin, one
result JSON line on stdout, ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` in
the environment) or in process (``--agent examples.smolagents.agent:run``).

The same tree of ``CodeAgent`` objects is ``run_code`` (``--code`` as a
command): the model acts by writing a block of Python per step, which
smolagents runs (the manager's code calls ``solver(task=...)``, the
solver's the calculator), and ends with ``final_answer(...)``. The logic is
the same, so ``truth.py`` holds for both. The calculator raises on anything
that is not arithmetic, as a real tool does: smolagents shows the model the
error and the agent goes on.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
from smolagents import CodeAgent, MultiStepAgent, OpenAIServerModel, ToolCallingAgent, tool

#: threads for in-process episodes (smolagents blocks on its HTTP calls)
POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="smolagents-episode")
#: one HTTP client for every episode's models: a client each would set up TLS each time
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


def build(
    base_url: str, api_key: str, off: set[str], kind: type[MultiStepAgent] = ToolCallingAgent
) -> MultiStepAgent:
    """The agent tree for one episode, without the modules agentbus switched off.

    ``kind`` is ``ToolCallingAgent`` (function calls) or ``CodeAgent`` (code).
    """

    def model(name: str) -> OpenAIServerModel:
        return OpenAIServerModel(
            model_id=name,
            api_base=base_url,
            api_key=api_key,
            client_kwargs={"max_retries": 0, "http_client": HTTP},
        )

    solver = kind(
        tools=[calculator],
        model=model("solver"),
        name="solver",
        description="Solves an arithmetic word problem and reports the number.",
        max_steps=4,
        verbosity_level=0,
    )
    if "manager" in off:
        return solver
    return kind(
        tools=[],
        model=model("manager"),
        managed_agents=[] if "solver" in off else [solver],
        max_steps=4,
        verbosity_level=0,
    )


def solve(
    task: dict[str, Any],
    base_url: str,
    api_key: str,
    off: set[str],
    kind: type[MultiStepAgent] = ToolCallingAgent,
) -> dict[str, Any]:
    agent = build(base_url, api_key, off, kind)
    answer = agent.run(task["question"])
    return {"answer": str(answer).strip()}


async def run(
    task: dict[str, Any], ctx: Any, kind: type[MultiStepAgent] = ToolCallingAgent
) -> dict[str, Any]:
    """In process: one episode in a thread of this module's pool."""
    loop = asyncio.get_running_loop()
    off = set(ctx.off_slots)
    return await loop.run_in_executor(POOL, solve, task, ctx.base_url, ctx.api_key, off, kind)


async def run_code(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """In process, the CodeAgent tree (``--agent examples.smolagents.agent:run_code``)."""
    return await run(task, ctx, CodeAgent)


def serve(kind: type[MultiStepAgent]) -> None:
    """As a worker: say so, then one episode per line on the channel agentbus names.

    agentbus sets ``AGENTBUS_WORKER``; the episode lines come on descriptor
    ``AGENTBUS_WORKER_FD`` (stdin under ``--agent-workers``), each with its own
    token and base URL. The hello line is the handshake that makes agentbus
    keep this process for episode after episode (docs/your-agent.md, Workers).
    """
    print(json.dumps({"agentbus_worker": 1}), flush=True)
    with open(int(os.environ.get("AGENTBUS_WORKER_FD", "0")), encoding="utf-8") as lines:
        for line in lines:
            msg = json.loads(line)
            off = set(msg["off_slots"])
            result = solve(msg["task"], msg["base_url"], msg["api_key"], off, kind)
            print(json.dumps(result), flush=True)


def main() -> None:
    kind = CodeAgent if "--code" in sys.argv[1:] else ToolCallingAgent
    if os.environ.get("AGENTBUS_WORKER"):
        return serve(kind)
    task = json.load(sys.stdin)
    off = {s for s in os.environ.get("AGENTBUS_OFF_SLOTS", "").split(",") if s}
    result = solve(task, os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"], off, kind)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
