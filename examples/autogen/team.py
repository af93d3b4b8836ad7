"""An AutoGen AgentChat team: a planner, a solver with a calculator, and a critic, in turn.

Three ``AssistantAgent`` objects in a ``RoundRobinGroupChat``, each on its
own ``OpenAIChatCompletionClient`` (autogen-ext) named after its module:

  planner (model "planner")                      a plan and a first estimate
  solver  (model "solver", tool: calculate)      works it out; reflects on the tool's result
  critic  (model "critic", structured output)    solves it again -> Review(answer, agrees)

Every agent sees the whole conversation (a group chat), speaks once, and the
team stops after the last one (``MaxMessageTermination``). The planner and
the solver end their message with ``ANSWER: <value>``, as their system
messages ask; the critic answers in a typed ``Review`` (AutoGen asks the
model for it as a JSON schema). The app then takes a vote: the value at
least two agents give; with no two agreeing, the last speaker's (the
critic's, the solver's when the critic is off). A module that agentbus
switched off is left out of the team.

Nothing here knows about agentbus: each agent's client names its module as
``model`` and takes the gateway as ``base_url``; an unknown model name needs
``model_info`` in AutoGen, so the app states what the modules can do.

Run it as a command (``--agent-cmd "python examples/autogen/team.py"``:
task JSON on stdin, one result JSON line on stdout; ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` in the environment) or in process
(``--agent examples.autogen.team:run``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import ChatAgent, Team
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.messages import StructuredMessage, TextMessage
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core.models import ChatCompletionClient, ModelInfo
from autogen_ext.models.openai import BaseOpenAIChatCompletionClient, OpenAIChatCompletionClient
from pydantic import BaseModel

MODULES = ("planner", "solver", "critic")
#: what the modules can do (AutoGen asks for it when the model name is not one it knows)
MODEL_INFO = ModelInfo(
    vision=False,
    function_calling=True,
    json_output=True,
    family="unknown",
    structured_output=True,
)
_ANSWER = re.compile(r"ANSWER:\s*(.+)")
_LAST_LINE = "End your message with a line 'ANSWER: <number>'."
SYSTEM = {
    "planner": (
        f"You plan how to solve arithmetic word problems: two steps and an estimate. {_LAST_LINE}"
    ),
    "solver": (
        "You solve the arithmetic problem exactly, following the plan if there is one. "
        f"Use the calculate tool for the arithmetic. {_LAST_LINE}"
    ),
    "critic": (
        "You check the proposed solutions by solving the problem again yourself, without "
        "trusting earlier answers. Give your own number and whether you agree."
    ),
}


class Review(BaseModel):
    """The critic's typed answer."""

    answer: float
    agrees: bool


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression of numbers, + - * / and parentheses."""
    if not expression.strip() or set(expression) - set("0123456789+-*/(). "):
        raise ValueError(f"not an arithmetic expression: {expression!r}")
    return str(eval(expression, {"__builtins__": {}}, {}))


def number(text: str | None) -> float | None:
    """A value as a number (``1164`` and ``1164.0`` are one answer), or None."""
    try:
        return None if text is None else float(text.replace(",", "").strip())
    except ValueError:
        return None


Clients = Callable[[str], ChatCompletionClient]


def build(clients: Clients, off: set[str]) -> RoundRobinGroupChat:
    """The team of the modules that are on, each agent on ``clients(module)``."""
    agents: list[ChatAgent | Team] = []
    for module in MODULES:
        if module in off:
            continue
        client = clients(module)
        extra: dict[str, Any] = {}
        if module == "solver":
            extra = {"tools": [calculate], "reflect_on_tool_use": True}
        elif module == "critic":
            extra = {"output_content_type": Review}
        agents.append(
            AssistantAgent(module, model_client=client, system_message=SYSTEM[module], **extra)
        )
    return RoundRobinGroupChat(
        agents,
        termination_condition=MaxMessageTermination(len(agents) + 1),
        custom_message_types=[StructuredMessage[Review]],  # the critic's typed message
    )


def vote(answers: dict[str, float | None], last: str) -> float | None:
    """The value at least two agents give; else the last speaker's."""
    counts = Counter(a for a in answers.values() if a is not None)
    value, n = counts.most_common(1)[0] if counts else (None, 0)
    return value if n >= 2 else answers.get(last)


async def solve(task: dict[str, Any], clients: Clients, off: set[str]) -> dict[str, Any]:
    """One task through the team: each agent's answer, then the vote."""
    if set(MODULES) <= off:
        return {"answer": None}
    result = await build(clients, off).run(task=task["question"])
    answers: dict[str, float | None] = {}
    for message in result.messages:
        if isinstance(message, StructuredMessage) and isinstance(message.content, Review):
            answers[message.source] = message.content.answer
        elif isinstance(message, TextMessage) and message.source in MODULES:
            found = _ANSWER.findall(message.content)
            answers[message.source] = number(found[-1]) if found else None
    last = [m for m in MODULES if m not in off][-1]
    return {"answer": vote(answers, last), "answers": answers}


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """agentbus's in-process entry point: ``--agent examples.autogen.team:run``.

    The agents' clients wrap the episode's own ``AsyncOpenAI`` (``ctx.openai``:
    its token, and the HTTP pool the in-process episodes share; agentbus
    closes it). A client of its own per agent and episode would open
    connections by the thousand: at the default concurrency, under load, a
    third of the episodes timed out connecting to the gateway.
    """

    def clients(module: str) -> ChatCompletionClient:
        args = {"model": module, "temperature": 0}
        return BaseOpenAIChatCompletionClient(ctx.openai, create_args=args, model_info=MODEL_INFO)

    return await solve(task, clients, set(ctx.off_slots))


async def main() -> None:
    """The command entry point: task JSON on stdin, one result JSON line on stdout."""
    task = json.load(sys.stdin)
    env = os.environ
    off = set(filter(None, env.get("AGENTBUS_OFF_SLOTS", "").split(",")))
    made: list[OpenAIChatCompletionClient] = []

    def clients(module: str) -> ChatCompletionClient:
        # the change that points an agent at agentbus: its module as model, the gateway as base_url
        client = OpenAIChatCompletionClient(
            model=module,
            base_url=env["OPENAI_BASE_URL"],
            api_key=env["OPENAI_API_KEY"],
            model_info=MODEL_INFO,
            temperature=0,
        )
        made.append(client)
        return client

    try:
        result = await solve(task, clients, off)
    finally:
        for client in made:
            await client.close()
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
