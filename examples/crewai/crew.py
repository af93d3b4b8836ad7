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


def llm(module: str, base_url: str, api_key: str) -> LLM:
    return LLM(model=f"openai/{module}", base_url=base_url, api_key=api_key, temperature=0)


def solve(task: dict[str, Any], base_url: str, api_key: str, off: set[str]) -> dict[str, Any]:
    question = task["question"]
    agents, tasks = [], []
    if "solver" not in off:
        solver = Agent(
            role="Solver",
            goal="Solve arithmetic word problems exactly",
            backstory="You work problems out step by step.",
            llm=llm("solver", base_url, api_key),
            allow_delegation=False,
            verbose=False,
        )
        agents.append(solver)
        tasks.append(
            Task(
                description=f"Solve: {question}",
                expected_output="The number that answers the problem.",
                agent=solver,
            )
        )
    if "reviewer" not in off:
        reviewer = Agent(
            role="Reviewer",
            goal="Check answers by solving the problem again independently",
            backstory="You never trust a result you did not work out yourself.",
            llm=llm("reviewer", base_url, api_key),
            allow_delegation=False,
            verbose=False,
        )
        agents.append(reviewer)
        tasks.append(
            Task(
                description=f"Solve this problem yourself, then give your number: {question}",
                expected_output="The number that answers the problem.",
                agent=reviewer,
                context=tasks[:1],
            )
        )
    if not tasks:
        return {"answer": ""}
    crew = Crew(agents=agents, tasks=tasks, process=Process.sequential, verbose=False)
    result = crew.kickoff()
    outputs = [t.raw for t in result.tasks_output]
    if len(outputs) == 2 and number(outputs[0]) != number(outputs[1]):
        return {"answer": "no agreed answer", "outputs": outputs}
    return {"answer": result.raw, "outputs": outputs}


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
