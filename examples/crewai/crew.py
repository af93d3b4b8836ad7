"""A CrewAI crew of two agents: a solver and a reviewer who works the problem out anew.

  solver   (Agent, LLM "openai/solver")    task 1: solve the problem
  reviewer (Agent, LLM "openai/reviewer")  task 2: solve it again on its own,
                                           with task 1's result as context

The crew runs the two tasks in order (``Process.sequential``). The app
accepts an answer only when the two agree (a cross-check): it returns the
crew's final output, the reviewer's, when the numbers match, and "no
agreed answer" otherwise. A module that agentbus switched off is left out:
without the reviewer the solver's output stands, without the solver the
reviewer answers alone. ``truth.py`` has the exact v(S).

The crew's final output is CrewAI's usual prose; agentbus's default scorer
reads the final answer out of it (docs/your-agent.md, Scorers), so the app
returns it as it is.

Nothing here knows about agentbus: each agent's ``LLM`` is
``openai/<module>`` with ``base_url`` at the gateway. CrewAI is
synchronous; in process each episode runs in a thread of this module's pool.

  python -m agentbus.run --agent-cmd ".venv-crewai/bin/python examples/crewai/crew.py" \
      --dataset examples/crewai/tasks.jsonl --slots solver,reviewer
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")  # no uploads with the episode token
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from crewai import LLM, Agent, Crew, Process, Task

POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="crewai-episode")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def number(text: str) -> str | None:
    """The last number in an agent's output (its answer), or None."""
    found = _NUMBER.findall(text.replace(",", ""))
    return found[-1] if found else None


#: module -> (role, goal, backstory, task description), in the crew's order
MEMBERS = {
    "solver": (
        "Solver",
        "Solve arithmetic word problems exactly",
        "You work problems out step by step.",
        "Solve: {question}",
    ),
    "reviewer": (
        "Reviewer",
        "Check answers by solving the problem again independently",
        "You never trust a result you did not work out yourself.",
        "Solve this problem yourself, then give your number: {question}",
    ),
}


def solve(task: dict[str, Any], base_url: str, api_key: str, off: set[str]) -> dict[str, Any]:
    """One episode: the crew of the modules that are on, then the cross-check."""
    agents, tasks = [], []
    for module, (role, goal, backstory, description) in MEMBERS.items():
        if module in off:
            continue
        llm = LLM(model=f"openai/{module}", base_url=base_url, api_key=api_key, temperature=0)
        agent = Agent(role=role, goal=goal, backstory=backstory, llm=llm, allow_delegation=False)
        agents.append(agent)
        tasks.append(
            Task(
                description=description.format(question=task["question"]),
                expected_output="The number that answers the problem.",
                agent=agent,
                context=tasks[:1],  # the reviewer sees the solver's result
            )
        )
    if not tasks:
        return {"answer": ""}
    result = Crew(agents=agents, tasks=tasks, process=Process.sequential).kickoff()
    outputs = [t.raw for t in result.tasks_output]
    if len(outputs) == 2 and number(outputs[0]) != number(outputs[1]):
        return {"answer": "no agreed answer", "outputs": outputs}
    return {"answer": result.raw, "outputs": outputs}


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """In process: the crew in a thread of this module's pool (CrewAI blocks)."""
    call = functools.partial(solve, task, ctx.base_url, ctx.api_key, set(ctx.off_slots))
    return await asyncio.get_running_loop().run_in_executor(POOL, call)


if __name__ == "__main__":  # as a command: the task on stdin, the gateway in the environment
    env = os.environ
    slots_off = set(filter(None, env.get("AGENTBUS_OFF_SLOTS", "").split(",")))
    line = solve(json.load(sys.stdin), env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"], slots_off)
    print(json.dumps(line))
