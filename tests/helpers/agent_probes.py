"""In-process probe agents for the tests of agent failures (issue 41).

``run`` behaves by task id: ``crash*`` raises, ``hang*`` sleeps past any
limit, ``empty*`` returns no answer, ``refused*`` calls a module that is no
slot and gives up when the gateway refuses it; every other task asks the
planner, then the solver, and returns the solver's ANSWER line.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent

_ANSWER = re.compile(r"ANSWER:\s*(.+)")


def _request(module: str, prompt: str) -> dict[str, Any]:
    """The chat request both probes send: one user turn asking for an ANSWER line."""
    return {
        "model": module,
        "messages": [{"role": "user", "content": prompt}],
        "temperature": 0,
    }


def _answer(reply: Any) -> str:
    """The last ANSWER line of a chat completion, or "" when it has none."""
    found = _ANSWER.findall(reply.choices[0].message.content or "")
    return found[-1].strip() if found else ""


async def _ask(ctx: Any, module: str, prompt: str) -> str:
    ask = prompt + "\nEnd with a line 'ANSWER: <value>'."
    return _answer(await ctx.openai.chat.completions.create(**_request(module, ask)))


async def run(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    ident = str(task["id"])
    if ident.startswith("crash"):
        raise RuntimeError("the probe crashed on purpose")
    if ident.startswith("hang"):
        await asyncio.sleep(3600)
    if ident.startswith("empty"):
        return {"note": "no answer key"}
    if ident.startswith("refused"):
        await _ask(ctx, "checker", task["question"])  # raises NotFoundError (404)
    off = ctx.off_slots
    plan = "" if "planner" in off else await _ask(ctx, "planner", f"Plan: {task['question']}")
    answer = await _ask(ctx, "solver", f"Task: {task['question']}\nA guess: {plan}")
    return {"answer": answer}


def probe_run(tmp: Path, tasks: list[str], **overrides: Any) -> tuple[Path, str]:
    """Run this probe in process on ``tasks`` (slots planner, solver); (run dir, console)."""
    import anyio
    from rich.console import Console

    from agentbus.app.config import build_config
    from agentbus.app.evaluate import evaluate

    rows = [{"id": t, "question": f"What is {n} + 1?", "answer": str(n + 1)} for n, t in
            enumerate(tasks)]  # fmt: skip
    if rows:
        (tmp / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    settings: dict[str, Any] = {
        "agent": "agent_probes:run",
        "env": "external",
        "dataset": str(tmp / "tasks.jsonl"),
        "slots": ["planner", "solver"],
        "run_dir": str(tmp / "run"),
        "progress": "off",
        "plots": False,
        "agent_timeout_s": 10.0,  # generous: a loaded machine must not time a probe out
        "sim": {"speed": 0, "transport": "inprocess"},
    }
    settings.update(overrides)
    out = io.StringIO()
    sys.path.insert(0, str(_HERE))
    try:
        anyio.run(evaluate, build_config(settings), Console(file=out, width=200))
    finally:
        sys.path.remove(str(_HERE))
    return tmp / "run", out.getvalue()


def _sync_ask(base_url: str, api_key: str, module: str, prompt: str) -> str:
    """One call through the official sync client (what smolagents and most sync SDKs do)."""
    import openai

    ask = prompt + "\nEnd with 'ANSWER: <value>'."
    with openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0) as client:
        return _answer(client.chat.completions.create(**_request(module, ask)))


async def sync_thread(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A synchronous agent run the obvious way: its sync client in ``asyncio.to_thread``."""

    def solve() -> str:
        plan = ""
        if "planner" not in ctx.off_slots:
            plan = _sync_ask(ctx.base_url, ctx.api_key, "planner", f"Plan: {task['question']}")
        return _sync_ask(
            ctx.base_url, ctx.api_key, "solver", f"Task: {task['question']}\nA guess: {plan}"
        )

    return {"answer": await asyncio.to_thread(solve)}
