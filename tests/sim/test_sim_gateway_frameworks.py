"""The generic gateway model fits the frameworks' conventions (issue 41 item 5).

Each test is one convention a framework relies on, with the request shape
that framework really sends: smolagents offers ``final_answer`` first and
writes its tool history as text, a manager delegates to a managed agent,
DSPy's adapters parse ``[[ ## field ## ]]`` sections or JSON, structured
outputs give a schema, ReAct prompts ask for ``Final Answer:``.
"""

from __future__ import annotations

import orjson

from agentbus.core.environment import Task
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.gateway_model import gateway_answer
from agentbus.sim.profiles import BUILTIN
from tests.helpers.gateway_rig import CALCULATOR

TASK = Task(id="t1", env="external", instruction="What is 6 * 7?", hidden={"answer": "42"})
USER: ChatMessage = {"role": "user", "content": "New task:\nWhat is 6 * 7?"}
FINAL = {
    "type": "function",
    "function": {
        "name": "final_answer",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        },
    },
}
WORKER = {  # a smolagents managed agent as the manager sees it
    "type": "function",
    "function": {
        "name": "solver",
        "parameters": {
            "type": "object",
            "properties": {"task": {"type": "string"}, "additional_args": {"type": "object"}},
            "required": ["task"],
        },
    },
}


def _answer(
    messages: list[ChatMessage],
    tools: tuple[dict, ...] = (),
    module: str = "solver",
    profile: str = "strong",
    response_format: dict | None = None,
):  # type: ignore[no-untyped-def]
    hint: dict = {"task": "t1", "module": module}
    if response_format is not None:
        hint["format"] = response_format
    params = SamplingParams(tools=tools, extra={"agentbus_gateway": hint})
    return gateway_answer({"t1": TASK}, True, BUILTIN.get(profile), hint, messages, params)


def _value(text: str) -> str:
    return text.rsplit("ANSWER: ", 1)[1]


def test_final_answer_tool_comes_last_and_carries_the_answer() -> None:
    tools = (FINAL, CALCULATOR)  # smolagents lists final_answer first
    first = _answer([USER], tools)
    assert [c.name for c in first.tool_calls] == ["calculator"]
    # smolagents writes the call back as text in an assistant turn, the result as a user turn
    history: list[ChatMessage] = [
        USER,
        {
            "role": "assistant",
            "content": "Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': "
            "{'name': 'calculator', 'arguments': {'expression': '6*7'}}}]",
        },
        {"role": "user", "content": "Observation:\n42"},
    ]
    second = _answer(history, tools)
    assert [c.name for c in second.tool_calls] == ["final_answer"]
    args = orjson.loads(second.tool_calls[0].arguments)
    assert args == {"answer": _value(second.text)}


def test_text_history_ends_the_tool_loop() -> None:
    """A calculator written back as text is not called again (it was, until max_steps)."""
    history: list[ChatMessage] = [
        USER,
        {"role": "assistant", "content": 'Calling tools:\n[{"function": {"name": "calculator"}}]'},
        {"role": "user", "content": "Observation:\n42"},
    ]
    assert _answer(history, (CALCULATOR,)).tool_calls == ()
    react = [USER, {"role": "assistant", "content": "Thought: add\nAction: calculator"}]
    assert _answer(react, (CALCULATOR,)).tool_calls == ()


def test_manager_delegates_first_then_relays_its_worker_when_wrong() -> None:
    first = _answer([USER], (FINAL, WORKER), module="manager", profile="weak")
    assert [c.name for c in first.tool_calls] == ["solver"]
    assert orjson.loads(first.tool_calls[0].arguments)["task"] == USER["content"]
    relayed = 0
    for i in range(40):
        history: list[ChatMessage] = [
            {"role": "user", "content": f"New task {i}:\nWhat is 6 * 7?"},
            {"role": "assistant", "content": "Calling tools:\n[{'name': 'solver'}]"},
            {
                "role": "user",
                "content": "Observation:\nHere is the final answer from your managed agent "
                "'solver':\n42",
            },
        ]
        answer = _answer(history, (FINAL, WORKER), module="manager", profile="weak")
        assert [c.name for c in answer.tool_calls] == ["final_answer"]
        value = orjson.loads(answer.tool_calls[0].arguments)["answer"]
        assert value == "42" and answer.verdict is not None and answer.verdict.correct
        relayed += answer.p_correct is not None and _value(answer.text) == "42"
    assert relayed == 40


def test_dspy_chat_adapter_fields() -> None:
    system: ChatMessage = {
        "role": "system",
        "content": "Your input fields are:\n1. `question` (str):\nYour output fields are:\n"
        "1. `reasoning` (str): \n2. `answer` (str):\nAll interactions will be structured in "
        "the following way, with the appropriate values filled in.\n\n[[ ## question ## ]]\n"
        "{question}\n\n[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## answer ## ]]\n{answer}\n\n"
        "[[ ## completed ## ]]",
    }
    answer = _answer([system, USER])
    text = answer.text
    assert text.startswith("[[ ## reasoning ## ]]\n") and text.endswith("[[ ## completed ## ]]")
    field = text.split("[[ ## answer ## ]]\n", 1)[1].split("\n", 1)[0]
    assert (field == "42") == answer.verdict.correct and "ANSWER:" not in text


def test_structured_output_schema_and_react() -> None:
    schema = {
        "type": "json_schema",
        "json_schema": {
            "name": "Out",
            "schema": {
                "type": "object",
                "properties": {"steps": {"type": "string"}, "answer": {"type": "integer"}},
            },
        },
    }
    answer = _answer([USER], response_format=schema)
    obj = orjson.loads(answer.text)
    assert set(obj) == {"steps", "answer"} and isinstance(obj["answer"], int)
    assert (obj["answer"] == 42) == answer.verdict.correct
    assert set(orjson.loads(_answer([USER], response_format={"type": "json_object"}).text)) == {
        "reasoning",
        "answer",
    }
    react: ChatMessage = {
        "role": "system",
        "content": "Use the format:\nThought: ...\nFinal Answer: the final answer",
    }
    text = _answer([react, USER]).text
    assert text.splitlines()[-1].startswith("Final Answer: ") and "ANSWER:" not in text
