"""The full run path plays the plain-openai example exactly as the in-process model (issue 42).

The example's truth (examples/plain_openai/truth.py) is exact for the
simulator's generic gateway model, and tests/examples/test_example_truths.py checks
that model against it statistically. This test closes the other gap: that a
run through ``evaluate`` (agent.py's ``run`` in process, its openai client
over HTTP to the gateway, the router with its cache and coalescing, the
simulator served over HTTP) plays *the same episodes* as ``gateway_answer``
called directly with the agent's messages. At temperature 0 both are
functions of (coalition, task), so they are compared episode by episode, not
in distribution: any request the path rewrote (temperature, max_tokens, stop
strings, an extra message), a cache answering across tasks or a load-caused
agent failure would flip some outcome or change some completion's length.

The direct side uses the run's own simulator setting (``SimConfig().coupled``:
independent verdicts per model); with coupled verdicts instead, some of the
same episodes come out differently, which shows the comparison can fail.
About 3 s of CPU for 8 tasks x 8 coalitions.
"""

from __future__ import annotations

import importlib.util
import io
import json
import random
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import anyio
import orjson
import pytest
from rich.console import Console

from agentbus.app.config import build_config
from agentbus.app.evaluate import evaluate
from agentbus.core.environment import Task
from agentbus.gateway.wire_common import DEFAULT_MAX_TOKENS
from agentbus.llm.types import SamplingParams
from agentbus.sim.config import SimConfig
from agentbus.sim.gateway_model import HINT, gateway_answer
from agentbus.sim.model import count_tokens
from agentbus.sim.profiles import BUILTIN

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plain_openai"
SLOTS = ("planner", "solver", "critic")
TASKS = 8


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


agent = _load("plain_agent_paths", EXAMPLE / "agent.py")

#: (task id, coalition) -> (reward, completion tokens of the episode)
Played = dict[tuple[str, tuple[str, ...]], tuple[float, int]]


def _tasks() -> list[dict[str, str]]:
    rng = random.Random(4242)
    out = []
    for i in range(TASKS):
        a, b, c = rng.randint(12, 99), rng.randint(3, 29), rng.randint(2, 60)
        out.append({"id": f"x{i:02d}", "question": f"What is {a} * {b} + {c}?",
                    "answer": str(a * b + c)})  # fmt: skip
    return out


class DirectClient:
    """An ``AsyncOpenAI`` look-alike answered by ``gateway_answer`` with the request as sent."""

    def __init__(self, task: Task, assignment: dict[str, str], coupled: bool) -> None:
        self.task, self.assignment, self.coupled = task, assignment, coupled
        self.chat = SimpleNamespace(completions=self)
        self.tokens = 0

    async def create(self, *, model: str, messages: list[Any], temperature: float, **_: Any) -> Any:
        hint = {"task": self.task.id, "module": model}
        params = SamplingParams(
            temperature=temperature, max_tokens=DEFAULT_MAX_TOKENS, extra={HINT: hint}
        )
        profile = BUILTIN.get(self.assignment[model])
        tasks = {self.task.id: self.task}
        answer = gateway_answer(tasks, self.coupled, profile, hint, messages, params)
        self.tokens += max(1, count_tokens(answer.text))
        message = SimpleNamespace(content=answer.text)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])


async def _direct(coupled: bool) -> Played:
    out: Played = {}
    for t in _tasks():
        task = Task(id=t["id"], env="external", instruction=t["question"],
                    hidden={"answer": t["answer"]})  # fmt: skip
        for mask in range(1 << len(SLOTS)):
            coalition = tuple(s for i, s in enumerate(SLOTS) if mask >> i & 1)
            assignment = {m: "strong" if m in coalition else "weak" for m in SLOTS}
            client = DirectClient(task, assignment, coupled)
            result = await agent.solve(client, t, set())
            out[(t["id"], coalition)] = (float(result["answer"] == t["answer"]), client.tokens)
    return out


@pytest.fixture(scope="module")
def run_path(tmp_path_factory: pytest.TempPathFactory) -> Played:
    tmp = tmp_path_factory.mktemp("example_paths")
    dataset = tmp / "tasks.jsonl"
    dataset.write_text("".join(json.dumps(t) + "\n" for t in _tasks()))
    agent = {"agent": "agent:run", "env": "external", "dataset": str(dataset), "slots": SLOTS}
    quiet = {"progress": "off", "plots": False, "trace": False, "run_dir": str(tmp / "run")}
    config = build_config({**agent, **quiet, "sim": {"speed": 0, "transport": "http"}})
    sys.path.insert(0, str(EXAMPLE))
    try:
        anyio.run(evaluate, config, Console(file=io.StringIO()))
    finally:
        sys.path.remove(str(EXAMPLE))
    out: Played = {}
    for line in (tmp / "run" / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event.get("type") != "episode.ended":
            continue
        outcome = event["outcome"]
        assert outcome.get("error") is None, outcome  # no agent failure, no infra error
        coalition = tuple(s for s in SLOTS if s in event["coalition"])
        tokens = sum(u["output_tokens"] for u in outcome["usage"].values())
        out[(event["task_id"], coalition)] = (outcome["reward"], tokens)
    return out


def test_the_run_path_plays_the_same_episodes_as_the_model(run_path: Played) -> None:
    direct = anyio.run(_direct, SimConfig().coupled)
    assert set(run_path) == set(direct)
    differ = {k: (run_path[k], direct[k]) for k in direct if run_path[k] != direct[k]}
    assert not differ, differ
    failures = sum(r < 1 for r, _ in direct.values())
    assert 0 < failures < len(direct)  # both outcomes occur, so a flip would show


def test_a_different_model_setting_is_caught(run_path: Played) -> None:
    """Coupled verdicts draw other answers for some of the same requests: the check sees it."""
    other = anyio.run(_direct, not SimConfig().coupled)
    assert any(run_path[k][0] != other[k][0] for k in other)
