"""The generic gateway model's tool rule (agentbus/sim/gateway_model.py, **Tools**).

Offered functions are called once each, first offered first, with a call id
of the request's own (the Agents SDK refuses a reused id), and with
placeholder arguments for required properties; once every offered function
was called (as the gateway writes earlier calls: ``<tool_call>`` blocks in
assistant turns) the answer is text only. The verdict (the ANSWER line) does
not depend on the tools.
"""

from __future__ import annotations

import orjson

from agentbus.core.environment import Task
from agentbus.llm.tools import format_tool_call
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.gateway_model import gateway_answer
from agentbus.sim.profiles import BUILTIN

TASK = Task(id="t1", env="external", instruction="What is 6 * 7?", hidden={"answer": "42"})
HINT = {"task": "t1", "module": "planner"}


def _fn(name: str, parameters: dict | None = None) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": parameters or {}}}


def _answer(messages: list[ChatMessage], tools: tuple[dict, ...]):  # type: ignore[no-untyped-def]
    params = SamplingParams(tools=tools, extra={"agentbus_gateway": HINT})
    return gateway_answer({"t1": TASK}, True, BUILTIN.get("strong"), HINT, messages, params)


def test_first_uncalled_function_is_called_with_the_answer_as_arguments_then_text_only() -> None:
    # issue 50: arguments drawn from the module's answer (was a placeholder per type,
    # {'n': 0, 'why': ''}, which a tool that checks its input refuses every time)
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "why": {"type": ["string", "null"]}},
        "required": ["n", "why"],
    }
    tools = (_fn("transfer_to_solver"), _fn("lookup", schema))
    first = _answer([{"role": "user", "content": "What is 6 * 7?"}], tools)
    assert [c.name for c in first.tool_calls] == ["transfer_to_solver"]
    assert first.finish_reason == "tool_calls" and "ANSWER:" in first.text
    assert "<tool_call>" not in first.text
    history: list[ChatMessage] = [
        {"role": "user", "content": "What is 6 * 7?"},
        {"role": "assistant", "content": format_tool_call("transfer_to_solver", {})},
        {"role": "user", "content": "Result of tool call x:\nok"},
    ]
    second = _answer(history, tools)
    assert [c.name for c in second.tool_calls] == ["lookup"]
    value = second.text.rsplit("ANSWER: ", 1)[1].strip()
    assert orjson.loads(second.tool_calls[0].arguments) == {"n": int(value), "why": value}
    assert second.tool_calls[0].id != first.tool_calls[0].id  # ids are the request's own
    history.append({"role": "assistant", "content": format_tool_call("lookup", {"n": 0})})
    third = _answer(history, tools)
    assert third.tool_calls == () and third.finish_reason == "stop"
    assert _answer(history, ()).tool_calls == ()


def test_tools_do_not_change_the_verdict() -> None:
    messages: list[ChatMessage] = [{"role": "user", "content": "What is 6 * 7? (check)"}]
    with_tools = _answer(messages, (_fn("transfer_to_critic"),))
    without = _answer(messages, ())
    assert with_tools.verdict == without.verdict and with_tools.text == without.text


def test_a_prompt_that_asks_for_code_gets_a_block_per_step() -> None:
    # issue 50: smolagents' CodeAgent parses nothing but a code block (before: prose)
    from agentbus.sim.gateway_code import code_answer, code_tags

    system = (
        "The code sequence must be opened with '<code>', and closed with '</code>'.\n"
        "def calculator(expression: string) -> string:\n"
        "def solver(task: str, additional_args: dict[str, Any]) -> str:\n"
        "def final_answer(answer: any) -> any:\n"
    )
    history: list[ChatMessage] = [
        {"role": "system", "content": system},
        {"role": "user", "content": "New task:\nWhat is 6 * 7?"},
    ]
    tags = code_tags(history)
    assert tags == ("<code>", "</code>")
    first = code_answer("Thinking.", "42", history, tags)
    assert first.endswith("<code>\ncalculator(expression='42')\n</code>")
    history.append({"role": "assistant", "content": first})
    second = code_answer("Thinking.", "42", history, tags)
    assert "solver(task='New task:\\nWhat is 6 * 7?')" in second
    history.append({"role": "assistant", "content": second})
    assert code_answer("Thinking.", "42", history, tags).endswith("final_answer(42)\n</code>")
    assert code_tags(history[1:]) is None  # no system prompt asking for code: no block
