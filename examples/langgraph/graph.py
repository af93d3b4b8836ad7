"""A LangGraph agent: planner, solver and critic nodes with a review loop.

The graph (one ``ChatOpenAI`` per node, each with its own model name):

    START -> planner -> solver -> critic --agrees--> END
                          ^         |
                          +--no-----+   (at most ROUNDS solver answers)

* the planner writes a plan and a quick estimate (``ANSWER: <value>``);
* the solver answers (attempt 1, 2, ...);
* the critic solves the task on its own. If its answer matches the solver's,
  that answer is final; if it matches the planner's estimate instead, the
  estimate is final (two independent routes to the same value); otherwise
  the solver tries again, and after ROUNDS attempts its last answer stands.

A module that agentbus switched off is routed around: no planner, the graph
starts at the solver (and there is no estimate); no critic, the solver's first
answer is final.

Nothing here knows about agentbus. The model names are the modules agentbus
swaps per coalition; ``base_url`` and ``api_key`` point ``ChatOpenAI`` at
agentbus's gateway (as a command, ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``
in the environment do it without arguments).

Run it as a command (``--agent-cmd "python examples/langgraph/graph.py"``:
task JSON on stdin, one result JSON line on stdout) or in process
(``--agent examples.langgraph.graph:run``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import weakref
from typing import Any, TypedDict

import openai
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph

ROUNDS = 2
MODULES = ("planner", "solver", "critic")
_ANSWER = re.compile(r"ANSWER:\s*(.+)")
_LAST_LINE = "\nEnd with a line 'ANSWER: <value>'."

SYSTEM = {
    "planner": "You plan how to solve arithmetic word problems. Be brief.",
    "solver": "You solve arithmetic problems carefully, following the plan you are given.",
    "critic": "You check proposed answers by solving the problem yourself.",
}


class State(TypedDict, total=False):
    question: str
    off: list[str]
    guess: str | None
    answer: str | None
    check: str | None
    attempt: int
    final: str | None
    done: bool
    confirmed_by: str | None


def answer_of(text: str) -> str | None:
    """The value after the last 'ANSWER:' in a reply."""
    found = _ANSWER.findall(text or "")
    return found[-1].strip() if found else None


async def ask(config: RunnableConfig, module: str, prompt: str) -> str | None:
    """One call of ``module``'s model (the ``ChatOpenAI`` this run was given for it)."""
    llm: ChatOpenAI = config["configurable"]["llms"][module]
    reply = await llm.ainvoke([SystemMessage(SYSTEM[module]), HumanMessage(prompt + _LAST_LINE)])
    return answer_of(str(reply.content))


async def planner(state: State, config: RunnableConfig) -> State:
    guess = await ask(config, "planner", f"Task: {state['question']}\nWrite a short plan.")
    return {"guess": guess}


async def solver(state: State, config: RunnableConfig) -> State:
    attempt = state.get("attempt", 0) + 1
    guess = state.get("guess")
    plan = f"A planner's estimate: {guess}" if guess else "No plan."
    rejected = state.get("answer")
    note = f"\nA reviewer rejected {rejected}." if rejected is not None else ""
    prompt = f"Task: {state['question']}\n{plan}{note}\nAttempt {attempt}."
    answer = await ask(config, "solver", prompt)
    if "critic" in state.get("off", []):
        return {"answer": answer, "attempt": attempt, "final": answer, "done": True}
    return {"answer": answer, "attempt": attempt}


async def critic(state: State, config: RunnableConfig) -> State:
    question, answer, attempt = state["question"], state.get("answer"), state["attempt"]
    prompt = f"Task: {question}\nProposed: {answer}\nRound {attempt}: solve it yourself."
    check = await ask(config, "critic", prompt)
    if check is not None and check == answer:
        return {"check": check, "final": answer, "done": True, "confirmed_by": "solver"}
    if check is not None and check == state.get("guess"):
        return {"check": check, "final": check, "done": True, "confirmed_by": "planner"}
    if attempt >= ROUNDS:
        return {"check": check, "final": answer, "done": True}
    return {"check": check}


def after_start(state: State) -> str:
    return "solver" if "planner" in state.get("off", []) else "planner"


def after_step(state: State) -> str:
    """The end once a node is done; else the next node (critic after solver, or back)."""
    return END if state.get("done") else "next"


def build() -> Any:
    """The compiled graph (built once; each run passes its own models in the config)."""
    graph = StateGraph(State)
    graph.add_node("planner", planner)
    graph.add_node("solver", solver)
    graph.add_node("critic", critic)
    graph.add_conditional_edges(START, after_start, ["planner", "solver"])
    graph.add_edge("planner", "solver")
    graph.add_conditional_edges("solver", after_step, {END: END, "next": "critic"})
    graph.add_conditional_edges("critic", after_step, {END: END, "next": "solver"})
    return graph.compile()


GRAPH = build()


def models(**client: Any) -> dict[str, ChatOpenAI]:
    """One ``ChatOpenAI`` per node, named after its module (``client``: base_url, api_key)."""
    return {m: ChatOpenAI(model=m, temperature=0, max_retries=0, **client) for m in MODULES}


#: HTTP clients shared by the in-process episodes of one event loop: each
#: ``ChatOpenAI`` would otherwise build its own (a TLS context, ~25 ms of CPU, twice)
_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def _pools() -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    pools = _POOLS.get(loop)
    if pools is None:
        pools = {
            "http_async_client": openai.DefaultAsyncHttpxClient(),
            "http_client": openai.DefaultHttpxClient(),  # ChatOpenAI makes a sync client too
        }
        _POOLS[loop] = pools
    return pools


async def solve(task: dict[str, Any], off: set[str], llms: dict[str, ChatOpenAI]) -> dict[str, Any]:
    state: State = {"question": task["question"], "off": sorted(off), "guess": None}
    out = await GRAPH.ainvoke(state, config={"configurable": {"llms": llms}})
    return {
        "answer": out.get("final"),
        "attempts": out.get("attempt"),
        "confirmed_by": out.get("confirmed_by"),
    }


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """agentbus's in-process entry point: ``--agent examples.langgraph.graph:run``."""
    llms = models(base_url=ctx.base_url, api_key=ctx.api_key, **_pools())
    return await solve(task, set(ctx.off_slots), llms)


async def serve() -> None:
    """As a worker (agentbus's handshake, docs/your-agent.md): one episode per line on the
    descriptor agentbus names, LangGraph and LangChain imported once for all of them."""
    print(json.dumps({"agentbus_worker": 1}), flush=True)
    lines = os.fdopen(int(os.environ.get("AGENTBUS_WORKER_FD", "0")))
    while line := await asyncio.to_thread(lines.readline):
        msg = json.loads(line)
        llms = models(base_url=msg["base_url"], api_key=msg["api_key"], **_pools())
        print(json.dumps(await solve(msg["task"], set(msg["off_slots"]), llms)), flush=True)


async def main() -> None:
    """The command entry point: task JSON on stdin, one result JSON line on stdout."""
    if os.environ.get("AGENTBUS_WORKER"):
        return await serve()
    task = json.loads(sys.stdin.read())
    off = {s for s in os.environ.get("AGENTBUS_OFF_SLOTS", "").split(",") if s}
    result = await solve(task, off, models())  # OPENAI_BASE_URL / OPENAI_API_KEY
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
