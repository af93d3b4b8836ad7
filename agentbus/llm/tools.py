"""Function calling: one shape for tool calls, native where the backend has it, text elsewhere.

A module offers tools by putting their OpenAI-format schemas in
``SamplingParams.tools`` and reads the model's calls from
``Completion.tool_calls``. Backends that speak the OpenAI tools protocol
(OpenAI, vLLM, the simulator) pass the schemas on and return structured calls
(``Backend.supports_tools``). For any other backend the router does what a
chat template and a tool-call parser do inside vLLM: it lists the tools in the
system prompt, asks for each call as a ``<tool_call>{...}</tool_call>`` block
(the Hermes convention many open models are trained on), and parses those
blocks out of the answer. So a module never needs to know which path ran.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from agentbus.llm.types import ChatMessage, Completion, SamplingParams, ToolCall

if TYPE_CHECKING:
    from agentbus.llm.backends.base import Backend

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)

#: how the text format is explained to a model without native function calling
TEXT_FORMAT = (
    "To call a function, write one block per call, exactly:\n"
    '<tool_call>{"name": "FUNCTION", "arguments": {...}}</tool_call>\n'
    "with the arguments as a JSON object matching the function's parameters."
)


def split_tool_calls(text: str) -> tuple[str, list[ToolCall]]:
    """The ``<tool_call>`` blocks of ``text`` as calls, and the text left around them.

    A block that is not a JSON object with a string ``name`` stays in the text:
    the caller sees a malformed call as the model wrote it, not a silent loss.
    """
    calls: list[ToolCall] = []
    kept: list[str] = []
    last = 0
    for i, m in enumerate(_BLOCK.finditer(text)):
        call = _parse_block(m.group(1), f"call_{i}")
        if call is None:
            continue
        kept.append(text[last : m.start()])
        last = m.end()
        calls.append(call)
    kept.append(text[last:])
    return "".join(kept).strip(), calls


def _parse_block(body: str, call_id: str) -> ToolCall | None:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    args = data.get("arguments", {})
    arguments = args if isinstance(args, str) else orjson.dumps(args).decode()
    return ToolCall(id=call_id, name=data["name"], arguments=arguments)


def format_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    """One call in the text format (what a model without native function calling writes)."""
    body = orjson.dumps({"name": name, "arguments": dict(arguments)}).decode()
    return f"<tool_call>{body}</tool_call>"


def describe_tools(tools: Sequence[Mapping[str, Any]]) -> str:
    """The tool schemas as prompt text: one JSON line per function, then the call format."""
    lines = ["You can call these functions:"]
    for tool in tools:
        fn = tool.get("function", tool)
        lines.append(orjson.dumps(fn, option=orjson.OPT_SORT_KEYS).decode())
    lines.append(TEXT_FORMAT)
    return "\n".join(lines)


def tools_in_prompt(
    messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]]
) -> list[ChatMessage]:
    """``messages`` with the tool list appended to the system prompt (one added if none)."""
    text = describe_tools(tools)
    out: list[ChatMessage] = [{"role": m["role"], "content": m["content"]} for m in messages]
    for m in out:
        if m["role"] == "system":
            m["content"] = f"{m['content']}\n\n{text}"
            return out
    return [{"role": "system", "content": text}, *out]


async def complete_with_tools(
    backend: Backend, messages: Sequence[ChatMessage], params: SamplingParams
) -> Completion:
    """One backend attempt; tools go natively or through the text format (module docstring)."""
    if not params.tools or backend.supports_tools:
        return await backend.complete(messages, params)
    plain = params.model_copy(update={"tools": ()})
    result = await backend.complete(tools_in_prompt(messages, params.tools), plain)
    text, calls = split_tool_calls(result.text)
    if not calls:
        return result
    return result.model_copy(update={"text": text, "tool_calls": calls})


__all__ = [
    "TEXT_FORMAT",
    "complete_with_tools",
    "describe_tools",
    "format_tool_call",
    "split_tool_calls",
    "tools_in_prompt",
]
