"""The gateway's pure parts: wire formats with tool calls, scorers, task files, the sim's model."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from agentbus.core.environment import Task
from agentbus.core.errors import UserError
from agentbus.gateway.scorers import load_scorer, parse_number, verdict
from agentbus.gateway.tasks import expected, load_jsonl, payload
from agentbus.gateway.wire import openai_response, openai_stream, parse_openai
from agentbus.gateway.wire_anthropic import anthropic_stream, parse_anthropic
from agentbus.gateway.wire_common import BadRequest
from agentbus.llm.types import Completion, SamplingParams, ToolCall
from agentbus.sim.gateway_model import HINT, module_skill
from agentbus.sim.model import SimModel
from agentbus.sim.profiles import BUILTIN

TOOL = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}


def test_openai_conversation_with_tool_calls_becomes_text_turns() -> None:
    call = parse_openai(
        {
            "model": "solver",
            "tools": [TOOL],
            "messages": [
                {"role": "developer", "content": "be exact"},
                {"role": "user", "content": [{"type": "text", "text": "2+3?"}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "function": {"name": "add", "arguments": '{"a":2,"b":3}'}}
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "5"},
            ],
        },
        temperature=0.0,
    )
    assert call.module == "solver" and call.tools == 1
    assert [m["role"] for m in call.messages] == ["system", "user", "assistant", "user"]
    assert (
        call.messages[2]["content"]
        == '<tool_call>{"name":"add","arguments":{"a":2,"b":3}}</tool_call>'
    )
    assert (
        call.messages[3]["content"].startswith("Result of tool call c1:")
        and "5" in call.messages[3]["content"]
    )
    assert call.params.tools == (TOOL,) and call.params.temperature == 0.0


def test_answers_with_tool_calls_in_both_formats() -> None:
    result = Completion(
        text="", model="m", tool_calls=[ToolCall(id="c9", name="add", arguments='{"a":1}')]
    )
    body = openai_response("solver", result)
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "add", "arguments": '{"a":1}'}
    stream = openai_stream("solver", result, include_usage=True).decode()
    assert '"tool_calls":[{"index":0' in stream and stream.endswith("data: [DONE]\n\n")
    events = anthropic_stream("solver", result).decode()
    assert '"type":"tool_use"' in events and '"partial_json":"{\\"a\\":1}"' in events
    assert "event: message_stop" in events


def test_anthropic_request_with_tool_use_and_results() -> None:
    call = parse_anthropic(
        {
            "model": "critic",
            "max_tokens": 50,
            "system": [{"type": "text", "text": "check"}],
            "tools": [{"name": "look", "input_schema": {"type": "object"}}],
            "messages": [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "look", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
                },
            ],
        },
        temperature=0.0,
    )
    assert call.messages[0] == {"role": "system", "content": "check"}
    assert "<tool_call>" in call.messages[2]["content"]
    assert call.params.tools[0]["function"]["name"] == "look"
    with pytest.raises(BadRequest, match="max_tokens"):
        parse_anthropic({"model": "x", "messages": [{"role": "user", "content": "a"}]}, 0.0)


@pytest.mark.parametrize(
    ("scorer", "answer", "expected_answer", "reward"),
    [
        ("exact", " Paris ", "paris", 1.0),
        ("exact", "Paris.", "paris", 0.0),
        ("contains", "It is Paris, France", "paris", 1.0),
        ("numeric", "1/2", "0.5", 1.0),
        ("numeric", "$1,000", "1000", 1.0),
        ("numeric", "50%", "0.5", 1.0),
        ("numeric", "0.51", "0.5", 0.0),
        ("numeric", "abc", "0.5", 0.0),
        ("regex", "the answer is 42.", r"\b42\b", 1.0),
        ("regex", "420", r"\b42\b", 0.0),
    ],
)
def test_builtin_scorers(scorer: str, answer: str, expected_answer: str, reward: float) -> None:
    got = verdict({"answer": answer}, {"answer": expected_answer}, load_scorer(scorer))
    assert got[0] == reward


def test_own_reward_user_scorer_and_bad_scorer_names() -> None:
    assert verdict({"reward": 0.25}, {}, None) == (0.25, False, "result")
    assert verdict({"reward": 7, "success": True}, {}, None)[:2] == (1.0, True)
    scorer = load_scorer("agentbus.gateway.scorers:numeric")
    assert verdict({"answer": "3"}, {"answer": "3.0"}, scorer)[:2] == (1.0, True)
    for bad in ("nope", "no_such_module_xyz:f", "agentbus.gateway.scorers:missing"):
        with pytest.raises(UserError):
            load_scorer(bad)
    assert parse_number("-2.5e3") == -2500.0


def test_jsonl_tasks_hide_the_answer(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"id": 1, "question": "q?", "answer": "a", "level": 2}\n\n{"id": "b", "prompt": "p"}\n'
    )
    tasks = load_jsonl(path)
    assert [t.id for t in tasks] == ["1", "b"]
    assert payload(tasks[0]) == {"id": "1", "question": "q?", "level": 2}
    assert expected(tasks[0])["answer"] == "a"
    assert tasks[1].instruction == "p"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"id": 1}\n{"id": 1}\n', "appears twice"),
        ('{"question": "x"}\n', 'no "id"'),
        ("[1, 2]\n", "must be a JSON object"),
        ('{"id": 1}\n{oops\n', ":2: not valid JSON"),
        ("\n", "holds no tasks"),
    ],
)
def test_bad_task_files_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(UserError, match=message):
        load_jsonl(path)


def test_generic_gateway_model_answers_with_the_module_skill() -> None:
    """2,000 distinct calls per (profile, module): the share right is the skill's base.

    Binomial se at p=0.35 over 2,000 calls is 0.011; the bound 0.04 is 3.7 se.
    A model that ignored the module (always ``other``: 0.35 for weak, 0.85 for
    strong) would miss strong's solver (0.95) and critic (0.90) by far more.
    """
    model = SimModel()
    task = Task(id="g1", env="external", instruction="", hidden={"answer": "123"})
    model.add_tasks("external", [task])
    for profile in ("weak", "strong"):
        for module in ("planner", "solver", "critic", "summarizer"):
            p = BUILTIN.get(profile).skill(module_skill(module)).base
            params = SamplingParams(extra={HINT: {"task": "g1", "module": module}})
            right = 0
            for i in range(2000):
                answer = model.generate(
                    f"sim:{profile}", [{"role": "user", "content": f"call {i}"}], params
                )
                assert answer.text.splitlines()[-1].startswith("ANSWER: ")
                right += answer.text.endswith("ANSWER: 123")
            assert abs(right / 2000 - p) < 0.04, (profile, module, right / 2000, p)
    assert module_skill("Critic") == "reflection" and module_skill("other-thing") == "other"


def test_generic_model_wrong_answers_differ() -> None:
    rng = random.Random(0)
    from agentbus.sim.gateway_model import wrong_answer

    values = {wrong_answer("42", rng) for _ in range(500)}
    assert "42" not in values and len(values) == 500
    assert wrong_answer("Paris", rng).startswith("guess-")
    assert orjson.loads(orjson.dumps(wrong_answer("2.5", rng))) != "2.5"
