"""A plain `openai` SDK agent: a planner, a solver and a critic with a retry loop.

Nothing here knows about agentbus except two things every OpenAI client has:
the base URL and the API key come from the environment (or from agentbus's
context object), and each component names its own model: "planner",
"solver", "critic". Pointed at OpenAI with real model names it runs as it
is; pointed at agentbus's gateway, each name is a module whose model agentbus
swaps per coalition.

The logic:
  1. the planner writes a plan and its own guess (ANSWER line);
  2. the solver answers, reading the plan;
  3. the critic solves the task on its own; if its answer equals the
     solver's, that answer is accepted;
  4. otherwise the solver tries again (at most ROUNDS answers in all); every
     call's prompt names its attempt or round, so no two calls of an
     episode are the same request (at temperature 0 the same request would
     get the same answer);
  5. with no confirmed answer, the planner's guess is returned (the last
     solver answer when there is no planner).
A module that agentbus switched off (AGENTBUS_OFF_SLOTS) is skipped: no
planner means no plan, no critic means the solver's first answer stands.

Run it as a command (``--agent-cmd "python agent.py"``: task JSON on stdin,
result JSON on stdout) or in process (``--agent agent:run``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from typing import Any

from openai import AsyncOpenAI

ROUNDS = 2
_ANSWER = re.compile(r"ANSWER:\s*(.+)")

SYSTEM = {
    "planner": "You plan how to solve arithmetic word problems. Be brief.",
    "solver": "You solve arithmetic problems carefully, following the plan you are given.",
    "critic": "You check proposed answers by solving the problem yourself.",
}


def answer_of(text: str) -> str | None:
    """The value after the last 'ANSWER:' in a reply."""
    found = _ANSWER.findall(text or "")
    return found[-1].strip() if found else None


async def ask(client: AsyncOpenAI, module: str, prompt: str) -> str | None:
    reply = await client.chat.completions.create(
        model=module,
        messages=[
            {"role": "system", "content": SYSTEM[module]},
            {"role": "user", "content": prompt + "\nEnd with a line 'ANSWER: <value>'."},
        ],
        temperature=0,
    )
    return answer_of(reply.choices[0].message.content or "")


async def solve(client: AsyncOpenAI, task: dict[str, Any], off: set[str]) -> dict[str, Any]:
    question = task["question"]
    guess = None
    if "planner" not in off:
        guess = await ask(client, "planner", f"Task: {question}\nWrite a short plan.")
    plan = f"A planner's guess: {guess}" if guess else "No plan."
    answer = await ask(client, "solver", f"Task: {question}\n{plan}\nAttempt 1.")
    if "critic" in off:
        return {"answer": answer, "rounds": 1}
    for attempt in range(1, ROUNDS + 1):
        check = await ask(
            client, "critic", f"Task: {question}\nProposed: {answer}\nRound {attempt}: solve it."
        )
        if check is not None and check == answer:
            return {"answer": answer, "rounds": attempt, "confirmed": True}
        if attempt < ROUNDS:
            answer = await ask(
                client,
                "solver",
                f"Task: {question}\n{plan}\nA reviewer rejected {answer}. Attempt {attempt + 1}.",
            )
    return {"answer": guess if guess is not None else answer, "rounds": ROUNDS}


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """agentbus's in-process entry point: ``--agent agent:run``."""
    return await solve(ctx.openai, task, set(ctx.off_slots))


async def main() -> None:
    """The command entry point: task JSON on stdin, one result JSON line on stdout."""
    task = json.loads(sys.stdin.read())
    off = {s for s in os.environ.get("AGENTBUS_OFF_SLOTS", "").split(",") if s}
    async with AsyncOpenAI(max_retries=0) as client:  # OPENAI_BASE_URL / OPENAI_API_KEY
        result = await solve(client, task, off)
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
