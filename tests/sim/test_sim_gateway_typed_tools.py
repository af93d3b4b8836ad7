"""The generic gateway model fills typed output tools and reads typed reports (issue 50).

pydantic-ai asks for an agent's typed output through a tool of its own,
``final_result``, whose parameters are the output model's JSON schema, and
validates the arguments: every field must have its type (a ``Literal``
field one of its members). An agent that delegates to another through a tool
gets the worker's typed output back as JSON. Before issue 50 the model
filled the other fields of a final tool with a bare placeholder (``""`` for
a ``Literal``: every episode of examples/pydantic_ai failed validation) and
repeated a worker's whole JSON report as its answer.
"""

from __future__ import annotations

import orjson

from agentbus.core.environment import Task
from agentbus.llm.tools import format_tool_call
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.gateway_model import gateway_answer
from agentbus.sim.profiles import BUILTIN

TASK = Task(id="t1", env="external", instruction="What is 6 * 7?", hidden={"answer": "42"})
#: pydantic-ai's output tool for Check(answer: float, verdict: Literal[...], notes: list[str])
FINAL_RESULT = {
    "type": "function",
    "function": {
        "name": "final_result",
        "parameters": {
            "type": "object",
            "properties": {
                "answer": {"type": "number"},
                "verdict": {"enum": ["accept", "reject"], "type": "string"},
                "notes": {"type": "array", "items": {"type": "string"}},
                "sure": {"type": "boolean"},
                "detail": {"$ref": "#/$defs/Detail"},
            },
            "required": ["answer", "verdict", "notes", "sure", "detail"],
            "additionalProperties": False,
            "$defs": {
                "Detail": {
                    "type": "object",
                    "properties": {"unit": {"enum": ["jars", "crates"]}},
                    "required": ["unit"],
                }
            },
        },
    },
}
DELEGATE = {  # pydantic-ai agent delegation: a tool that runs another agent
    "type": "function",
    "function": {
        "name": "delegate_to_solver",
        "parameters": {
            "type": "object",
            "properties": {"task": {"type": "string"}},
            "required": ["task"],
        },
    },
}


def _answer(messages: list[ChatMessage], tools: tuple[dict, ...], module: str, profile: str):  # type: ignore[no-untyped-def]
    hint = {"task": "t1", "module": module}
    params = SamplingParams(tools=tools, extra={"agentbus_gateway": hint})
    return gateway_answer({"t1": TASK}, True, BUILTIN.get(profile), hint, messages, params)


def test_a_typed_output_tool_gets_every_field_in_its_type() -> None:
    user: ChatMessage = {"role": "user", "content": "What is 6 * 7?"}
    answer = _answer([user], (FINAL_RESULT,), "critic", "strong")
    [call] = answer.tool_calls
    args = orjson.loads(call.arguments)
    value = answer.text.rsplit("ANSWER: ", 1)[1].strip()
    assert args["answer"] == int(value)  # a number, not its text
    assert args["verdict"] in ("accept", "reject")  # was "": no Literal member
    assert isinstance(args["notes"], list) and all(isinstance(n, str) for n in args["notes"])
    assert isinstance(args["sure"], bool)
    assert args["detail"] == {"unit": "jars"}  # the $ref followed into $defs


def test_a_planner_relays_the_answer_field_of_its_workers_json_report() -> None:
    relayed = right = 0
    for i in range(40):
        history: list[ChatMessage] = [
            {"role": "user", "content": f"Task {i}: What is 6 * 7?"},
            {"role": "assistant", "content": format_tool_call("delegate_to_solver", {"task": "x"})},
            {
                "role": "user",
                "content": 'Result of tool call call_1:\n{"answer":17.0,"confident":true}',
            },
        ]
        answer = _answer(history, (DELEGATE, FINAL_RESULT), "planner", "weak")
        [call] = answer.tool_calls
        assert call.name == "final_result"
        value = orjson.loads(call.arguments)["answer"]
        assert value in (42, 17), value  # was the whole report: '{"answer":17.0,...}'
        assert answer.verdict is not None and answer.verdict.correct == (value == 42)
        relayed += value == 17
        right += value == 42
    assert relayed > 0 and right > 0
