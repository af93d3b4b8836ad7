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

Real servers do not always return calls where the protocol says: a server
started without a tool-call parser (vLLM without
``--enable-auto-tool-choice --tool-call-parser``, llama.cpp without
``--jinja``) hands the model's call back as text with ``tool_calls: []``, and
small models write it in a fenced ```json block, as bare JSON, or as
``<tool_call>`` whatever they were told. So whenever tools were offered and
the answer carries no structured call, the text is read for one
(:func:`read_tool_calls`), for every backend. A call that names no offered
function, or whose arguments are not a JSON object, is not used; it is
counted in ``Completion.invalid_tool_calls`` (shown per slot in the results).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from agentbus.llm.streaming import token_sink
from agentbus.llm.types import ChatMessage, Completion, SamplingParams, ToolCall

if TYPE_CHECKING:
    from agentbus.llm.backends.base import Backend

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
#: the same, also when the model (or its token limit) left the last block unclosed
_BLOCK_OPEN = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FENCED = re.compile(r"```[ \t]*([\w.+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
#: fence tags under which a call may come (none, or a JSON-ish or tool tag)
_CALL_TAGS = frozenset({"", "json", "json5", "tool_call", "tool", "function", "javascript"})

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


def _call_objects(data: Any) -> list[dict[str, Any]]:
    """The call-shaped objects of parsed JSON: one object, or a list of them."""
    items = data if isinstance(data, list) else [data]
    return [d for d in items if isinstance(d, dict)]


def _as_call(obj: dict[str, Any], names: frozenset[str], call_id: str) -> ToolCall | str:
    """``obj`` as a call of an offered function, else why it is not one.

    Shapes read: ``{"name", "arguments"}`` (Hermes, Qwen), ``{"name",
    "parameters"}`` (Llama 3), ``{"function": {...}}`` and
    ``{"type": "function", "function": {...}}`` (the OpenAI wire shape).
    """
    inner = obj.get("function")
    if isinstance(inner, dict):
        obj = inner
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return "no function name"
    if names and name not in names:
        return f"unknown function {name!r}"
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = orjson.loads(args or "{}")
        except orjson.JSONDecodeError:
            return f"arguments of {name!r} are not JSON"
    if not isinstance(args, dict):
        return f"arguments of {name!r} are not a JSON object"
    return ToolCall(id=call_id, name=name, arguments=orjson.dumps(args).decode())


def _looks_like_call(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("function"), dict) or (
        "name" in obj and ("arguments" in obj or "parameters" in obj)
    )


def _bare_json(text: str) -> list[tuple[int, int, Any]]:
    """Top-level JSON objects or arrays in free text: (start, end, value) each."""
    found: list[tuple[int, int, Any]] = []
    decoder = json.JSONDecoder()
    i = 0
    while True:
        starts = [p for p in (text.find("{", i), text.find("[", i)) if p >= 0]
        if not starts:
            return found
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            i = start + 1
            continue
        found.append((start, end, value))
        i = end


def read_tool_calls(
    text: str, names: Sequence[str] | frozenset[str] = ()
) -> tuple[str, list[ToolCall], int]:
    """Function calls written in ``text``: (the text left, the calls, how many were invalid).

    Tried in order, the first form that holds any call wins: ``<tool_call>``
    blocks, fenced blocks (no tag, ``json``, ``tool_call``), bare JSON. With
    ``names`` (the offered functions), a call of another function is invalid;
    a fenced or bare JSON value that does not look like a call at all (no
    ``name`` with ``arguments``/``parameters``) is ordinary text, not counted.
    """
    offered = frozenset(names)
    if "<tool_call>" in text:
        return _read_spans(
            text,
            [(m.start(), m.end(), m.group(1)) for m in _BLOCK_OPEN.finditer(text)],
            offered,
            strict=True,
        )
    fenced = [
        (m.start(), m.end(), m.group(2))
        for m in _FENCED.finditer(text)
        if m.group(1).lower() in _CALL_TAGS
    ]
    if fenced:
        left, calls, invalid = _read_spans(text, fenced, offered, strict=False)
        if calls or invalid:
            return left, calls, invalid
    bare = [(a, b, v) for a, b, v in _bare_json(text)]
    return _read_values(text, bare, offered)


def _read_spans(
    text: str, spans: list[tuple[int, int, str]], offered: frozenset[str], *, strict: bool
) -> tuple[str, list[ToolCall], int]:
    """Parse each span's body as JSON; ``strict``: a body that is no JSON call is invalid."""
    values: list[tuple[int, int, Any]] = []
    invalid = 0
    for start, end, body in spans:
        try:
            values.append((start, end, orjson.loads(body)))
        except orjson.JSONDecodeError:
            if strict:
                invalid += 1
    left, calls, bad = _read_values(text, values, offered, strict=strict)
    return left, calls, invalid + bad


def _read_values(
    text: str, values: list[tuple[int, int, Any]], offered: frozenset[str], *, strict: bool = False
) -> tuple[str, list[ToolCall], int]:
    calls: list[ToolCall] = []
    kept: list[str] = []
    invalid, last = 0, 0
    for start, end, value in values:
        objects = _call_objects(value)
        if not strict:
            objects = [o for o in objects if _looks_like_call(o)]
        if not objects:
            if strict:
                invalid += 1
            continue
        taken = False
        for obj in objects:
            call = _as_call(obj, offered, f"call_{len(calls)}")
            if isinstance(call, ToolCall):
                calls.append(call)
                taken = True
            else:
                invalid += 1
        if taken:
            kept.append(text[last:start])
            last = end
    kept.append(text[last:])
    return "".join(kept).strip(), calls, invalid


def tool_names(tools: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The function names of OpenAI-format tool schemas."""
    out: set[str] = set()
    for tool in tools:
        fn = tool.get("function", tool)
        name = fn.get("name") if isinstance(fn, Mapping) else None
        if isinstance(name, str):
            out.add(name)
    return frozenset(out)


def checked_calls(calls: Sequence[ToolCall], names: frozenset[str]) -> tuple[list[ToolCall], int]:
    """Structured calls of offered functions with JSON-object arguments, and the invalid count."""
    good: list[ToolCall] = []
    invalid = 0
    for c in calls:
        call = _as_call({"name": c.name, "arguments": c.arguments}, names, c.id)
        if isinstance(call, ToolCall):
            good.append(call)
        else:
            invalid += 1
    return good, invalid


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
    if not params.tools:
        return await backend.complete(messages, params)
    names = tool_names(params.tools)
    if backend.supports_tools:
        result = await backend.complete(messages, params)
    else:
        plain = params.model_copy(update={"tools": ()})
        with token_sink(None):  # calls written as text are read from the whole answer: no stream
            result = await backend.complete(tools_in_prompt(messages, params.tools), plain)
    if result.tool_calls:
        calls, invalid = checked_calls(result.tool_calls, names)
        return result.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})
    text, calls, invalid = read_tool_calls(result.text, names)
    if not calls and not invalid:
        return result
    return result.model_copy(
        update={
            "text": text if calls else result.text,
            "tool_calls": calls,
            "invalid_tool_calls": invalid,
        }
    )


__all__ = [
    "TEXT_FORMAT",
    "checked_calls",
    "complete_with_tools",
    "describe_tools",
    "format_tool_call",
    "read_tool_calls",
    "split_tool_calls",
    "tool_names",
    "tools_in_prompt",
]
