"""An OpenAI Agents SDK app: a planner hands off to a solver, the solver to a critic.

Three SDK ``Agent`` objects, each with its own model name, chained by
handoffs (the SDK offers each handoff to the model as a function
``transfer_to_<agent>``; the model calls it to pass the conversation on):

  Planner (model "planner")  --handoff-->  Solver ("solver")  --handoff-->  Critic ("critic")

Each agent writes its own answer as a last line ``ANSWER: <value>``: the
planner a quick estimate, the solver a worked answer, the critic an answer it
works out on its own. The app then reads the three answers from the run's
items and takes a vote: the value at least two of them give; with no two
agreeing, the solver's. A module that agentbus switched off is left out of
the chain (no planner: the run starts at the solver; no critic: the solver
hands off to nobody and its answer stands).

Nothing here knows about agentbus. The model names are the modules
agentbus swaps per coalition; the client is an ordinary ``AsyncOpenAI``
pointed at agentbus's gateway, through the chat completions API (the gateway
does not serve the Responses API), with tracing off (traces would go to
OpenAI with the episode token as key).

Run it as a command (``--agent-cmd "python examples/openai_agents/agent.py"``:
task JSON on stdin, one result JSON line on stdout; ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` in the environment) or in process
(``--agent examples.openai_agents.agent:run``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections import Counter
from typing import Any

from agents import (
    Agent,
    ItemHelpers,
    MessageOutputItem,
    RunConfig,
    Runner,
    set_default_openai_api,
    set_default_openai_client,
    set_tracing_disabled,
)
from agents.models.openai_provider import OpenAIProvider
from openai import AsyncOpenAI

MODULES = ("planner", "solver", "critic")
_ANSWER = re.compile(r"ANSWER:\s*(.+)")
_LAST_LINE = "End your message with a line 'ANSWER: <value>'."

INSTRUCTIONS = {
    "planner": (
        "You plan how to solve arithmetic word problems. Write a two-step plan and your "
        f"own quick estimate of the result. {_LAST_LINE} Then hand off to the solver."
    ),
    "solver": (
        "You solve arithmetic problems carefully, following the plan in the conversation "
        f"if there is one. {_LAST_LINE} Then hand off to the critic, if you can."
    ),
    "critic": (
        "You review a proposed solution by solving the problem again yourself, without "
        f"trusting earlier answers. {_LAST_LINE}"
    ),
}


def answer_of(text: str) -> str | None:
    """The value after the last 'ANSWER:' in a message."""
    found = _ANSWER.findall(text or "")
    return found[-1].strip() if found else None


def build(off: set[str]) -> Agent[Any]:
    """The chain of agents for the modules that are on; returns the one the run starts at."""
    critic = Agent(name="Critic", model="critic", instructions=INSTRUCTIONS["critic"])
    solver = Agent(
        name="Solver",
        model="solver",
        instructions=INSTRUCTIONS["solver"],
        handoffs=[] if "critic" in off else [critic],
    )
    if "planner" in off:
        return solver
    return Agent(
        name="Planner", model="planner", instructions=INSTRUCTIONS["planner"], handoffs=[solver]
    )


def vote(answers: dict[str, str | None]) -> str | None:
    """The value at least two agents give; else the solver's answer."""
    counts = Counter(a for a in answers.values() if a is not None)
    value, n = counts.most_common(1)[0] if counts else (None, 0)
    return value if n >= 2 else answers.get("solver")


async def solve(task: dict[str, Any], off: set[str], config: RunConfig | None) -> dict[str, Any]:
    """One task through the chain; the answer and each agent's own answer."""
    result = await Runner.run(build(off), task["question"], run_config=config)
    answers: dict[str, str | None] = {}
    for item in result.new_items:
        if isinstance(item, MessageOutputItem):
            module = str(item.agent.model)
            answers[module] = answer_of(ItemHelpers.text_message_output(item))
    return {"answer": vote(answers), "answers": answers, "last_agent": result.last_agent.name}


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """agentbus's in-process entry point: ``--agent examples.openai_agents.agent:run``.

    Thousands of episodes share this process, each with its own token, so the
    client goes in the run's config rather than the SDK's process-wide default.
    """
    provider = OpenAIProvider(openai_client=ctx.openai, use_responses=False)
    config = RunConfig(model_provider=provider, tracing_disabled=True)
    return await solve(task, set(ctx.off_slots), config)


async def serve() -> None:
    """As a worker (agentbus's handshake, docs/your-agent.md): one episode per line on the
    descriptor agentbus names, the SDK imported once for all of them."""
    print(json.dumps({"agentbus_worker": 1}), flush=True)
    lines = os.fdopen(int(os.environ.get("AGENTBUS_WORKER_FD", "0")))
    while line := await asyncio.to_thread(lines.readline):
        msg = json.loads(line)
        async with AsyncOpenAI(base_url=msg["base_url"], api_key=msg["api_key"]) as client:
            provider = OpenAIProvider(openai_client=client, use_responses=False)
            config = RunConfig(model_provider=provider, tracing_disabled=True)
            result = await solve(msg["task"], set(msg["off_slots"]), config)
        print(json.dumps(result), flush=True)


async def main() -> None:
    """The command entry point: task JSON on stdin, one result JSON line on stdout."""
    if os.environ.get("AGENTBUS_WORKER"):
        return await serve()
    task = json.loads(sys.stdin.read())
    off = {s for s in os.environ.get("AGENTBUS_OFF_SLOTS", "").split(",") if s}
    # the two-line change: a client pointed at the gateway, and chat completions
    client = AsyncOpenAI(
        base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
    )
    set_default_openai_client(client, use_for_tracing=False)
    set_default_openai_api("chat_completions")
    set_tracing_disabled(True)
    result = await solve(task, off, None)
    await client.close()
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
