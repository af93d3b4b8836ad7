"""The tools environment: seeded tasks, call validation, error observations, variants, scoring."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentbus import ActionProposed, SamplingParams, TaskSource, UserError
from agentbus.sim.engine import SimEngine, SimRequest
from agentbus.sim.model import SimModel
from environments.tools.apis import CATALOGUE
from environments.tools.env import ToolsEnvironment
from environments.tools.expert import ToolsExpert
from environments.tools.generator import make_spec


def _tasks(n: int = 40, seed: int = 0):  # type: ignore[no-untyped-def]
    return ToolsEnvironment.setup(TaskSource(count=n, seed=seed)).tasks


def _act(call: dict) -> ActionProposed:  # type: ignore[type-arg]
    return ActionProposed(text=orjson.dumps(call).decode())


def test_generator_is_seeded_prefix_stable_and_covers_every_kind_and_variant() -> None:
    a, b = _tasks(40), _tasks(10)
    assert [t.model_dump() for t in a[:10]] == [t.model_dump() for t in b]
    assert _tasks(5, seed=1)[0].instruction != a[0].instruction
    assert {t.data["kind"] for t in a} == {"single", "multi_tool", "multi_step"}
    assert {t.data["variant"] for t in a} == {"none", "transient", "correction"}
    assert len({t.instruction for t in a}) == len(a)
    for t in a:  # the agent sees schemas, never the ground truth
        assert "calls" not in t.data and "transient" not in t.data
        assert all(s["function"]["name"] in CATALOGUE for s in t.data["tools"])


async def test_ground_truth_calls_then_the_facts_pass() -> None:
    for task in _tasks(30):
        env = ToolsEnvironment()
        await env.reset(task)
        for call in task.hidden["calls"]:
            fb = await env.step(_act(call))
            if not fb.data["ok"]:  # the planned transient failure: retry the same call
                assert fb.data["kind"] in ("rate_limit", "timeout") and fb.needs_reflection
                fb = await env.step(_act(call))
            assert fb.data["ok"], fb.text
        answer = "Result: " + "; ".join(task.hidden["facts"])
        done = await env.step(_act({"name": "finish", "arguments": {"answer": answer}}))
        assert done.done and done.success
        assert (await env.score()).success


async def test_error_observations() -> None:
    task = _tasks(1)[0]
    env = ToolsEnvironment()
    await env.reset(task)
    cases = [
        ("not json", "parse_error"),
        ({"name": "get_weather_now", "arguments": {}}, "unknown_tool"),
        ({"name": "get_forecast", "arguments": {"city": "Oslo", "days": 12}}, "invalid_argument"),
        ({"name": "get_stock_quote", "arguments": {"symbol": "nwt"}}, "invalid_argument"),
        ({"name": "get_current_weather", "arguments": {"city": "Atlantis"}}, "not_found"),
        (
            {"name": "get_air_quality", "arguments": {"city": "Oslo", "extra": 1}},
            "invalid_argument",
        ),
    ]
    for action, kind in cases:
        text = action if isinstance(action, str) else orjson.dumps(action).decode()
        fb = await env.step(ActionProposed(text=text))
        assert fb.text.startswith(f"ERROR {kind}"), fb.text
        assert fb.needs_reflection and not fb.done
    ok = await env.step(_act({"name": "get_timezone", "arguments": {"city": "oslo"}}))
    assert ok.text.startswith("OK get_timezone") and ok.data["ok"]


async def test_self_correction_variants() -> None:
    tasks = _tasks(40)
    transient = next(t for t in tasks if t.data["variant"] == "transient")
    planned = transient.hidden["transient"]
    call = transient.hidden["calls"][planned["index"]]
    env = ToolsEnvironment()
    await env.reset(transient)
    first, second = await env.step(_act(call)), await env.step(_act(call))
    assert first.text.startswith(f"ERROR {planned['kind']}") and "retry" in first.text
    assert second.data["ok"]

    corr = next(t for t in tasks if t.data["variant"] == "correction")
    env = ToolsEnvironment()
    obs = await env.reset(corr)
    prior = corr.data["prior"]
    assert "Earlier in this conversation" in obs.text and prior["error"] in obs.text
    again = await env.step(_act(prior["call"]))  # repeating the wrong call fails again
    assert again.text == prior["error"]
    fixed = await env.step(_act(corr.hidden["calls"][0]))
    assert fixed.data["ok"]


async def test_missing_fact_fails() -> None:
    task = next(t for t in _tasks(20) if len(t.hidden["facts"]) > 1)
    env = ToolsEnvironment()
    await env.reset(task)
    answer = "Only: " + task.hidden["facts"][0]
    fb = await env.step(_act({"name": "finish", "arguments": {"answer": answer}}))
    assert fb.done and not fb.success
    score = await env.score()
    assert not score.success and score.details["missing_facts"]


def test_dataset_round_trip_and_bad_files(tmp_path: Path) -> None:
    specs = [make_spec(3, i).model_dump() for i in range(5)]
    path = tmp_path / "tasks.json"
    path.write_bytes(orjson.dumps({"tasks": specs}))
    loaded = ToolsEnvironment.setup(TaskSource(dataset=path, limit=4)).tasks
    assert [t.model_dump() for t in loaded] == [
        t.model_dump() for t in ToolsEnvironment.setup(TaskSource(count=4, seed=3)).tasks
    ]
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps([{**specs[0], "calls": [{"name": "nope"}]}]))
    with pytest.raises(UserError, match="unknown function"):
        ToolsEnvironment.setup(TaskSource(dataset=bad))
    with pytest.raises(UserError, match="not found"):
        ToolsEnvironment.setup(TaskSource(dataset=tmp_path / "missing.json"))


async def test_simulator_answers_a_tool_agent_with_structured_calls() -> None:
    """With tools offered, the simulator's answer comes back as tool_calls (the native path)."""
    task = next(t for t in _tasks(10) if t.data["variant"] == "none")
    expert = ToolsExpert()
    model = SimModel(profiles=None, experts=[expert])
    model.add_tasks("tools", [task])
    engine = SimEngine(model)
    messages = [
        {
            "role": "system",
            "content": "You are the action module of an LLM agent: MIRROR tool agent.",
        },
        {
            "role": "user",
            "content": f"## Task\n{task.instruction}\n\n## Current subtask\nfirst call",
        },
    ]
    params = SamplingParams(tools=tuple(task.data["tools"]))
    calls = []
    for i in range(6):  # different prompts, some right, some wrong: always a structured call
        msgs = [messages[0], {"role": "user", "content": messages[1]["content"] + f" {i}"}]
        answer = await engine.run(SimRequest("strong", msgs, params))  # type: ignore[arg-type]
        assert answer.tool_calls and "<tool_call>" not in answer.text
        calls.append(answer.tool_calls[0].name)
    assert task.hidden["calls"][0]["name"] in calls
    plain = await engine.run(SimRequest("strong", messages, SamplingParams()))  # type: ignore[arg-type]
    assert not plain.tool_calls and "<tool_call>" in plain.text
