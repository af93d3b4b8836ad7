"""The two wire formats the gateway speaks, to and from the router's one chat shape.

The router (and every backend behind it) takes plain chat turns: system, user
and assistant text, tools offered as OpenAI function schemas, and answers with
text plus structured tool calls. An agent's conversation can hold more:
assistant turns that called tools and the tool results that came back. Those
are written into the text the way a chat template does for a model without
native function calling: a call as a ``<tool_call>{...}</tool_call>`` block
(:func:`agentbus.llm.tools.format_tool_call`) and a result as a user turn
naming the call it answers. A model reads the same conversation; no backend
needs to learn a second message shape.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import ValidationError

from agentbus.llm.tools import format_tool_call
from agentbus.llm.types import ChatMessage, Completion, SamplingParams

#: completion length when the agent does not say (OpenAI has no fixed default either)
DEFAULT_MAX_TOKENS = 1024


class BadRequest(Exception):
    """The request cannot be read; the message names the field."""


@dataclass
class ChatCall:
    """One request in the router's shape, with how the agent wants the answer."""

    module: str
    messages: list[ChatMessage]
    params: SamplingParams
    stream: bool = False
    include_usage: bool = False
    tools: int = 0
    #: the agent's ``response_format`` (structured outputs); the simulator follows it
    response_format: Any = None


def _text(content: Any, where: str) -> str:
    """A content string, or the text of a list of parts (other parts are named, not sent)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if not isinstance(part, dict):
                raise BadRequest(f"{where}: content parts must be objects")
            kind = part.get("type")
            if kind in ("text", "input_text", "output_text"):
                parts.append(str(part.get("text", "")))
            elif kind == "tool_result":
                parts.append(_tool_result(part.get("tool_use_id"), part.get("content"), where))
            elif kind == "tool_use":
                parts.append(_call_text(part.get("name"), part.get("input"), where))
            else:
                parts.append(f"[{kind} part omitted]")
        return "\n".join(parts)
    raise BadRequest(f"{where}: content must be a string or a list of parts")


def _call_text(name: Any, arguments: Any, where: str) -> str:
    if not isinstance(name, str):
        raise BadRequest(f"{where}: a tool call needs a string name")
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError:
            arguments = {"_raw": arguments}
    return format_tool_call(name, arguments if isinstance(arguments, dict) else {})


def _tool_result(call_id: Any, content: Any, where: str) -> str:
    return f"Result of tool call {call_id or ''}:\n{_text(content, where)}".replace("  ", " ")


def _params(
    body: dict[str, Any],
    *,
    max_tokens: Any,
    stop: Any,
    temperature: float,
    tools: tuple[dict[str, Any], ...],
    hint: dict[str, Any] | None,
) -> SamplingParams:
    if isinstance(stop, str):
        stop = [stop]
    t = body.get("temperature")
    top_p = body.get("top_p")
    try:
        return SamplingParams(
            temperature=temperature if t is None else t,
            max_tokens=DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
            top_p=1.0 if top_p is None else top_p,
            seed=body.get("seed"),
            stop=tuple(stop or ()),
            tools=tools,
            extra={"agentbus_gateway": hint} if hint else {},
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BadRequest(
            f"invalid {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
        ) from None


def _module(body: dict[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' is required: it names the module making the call")
    return model


# -- OpenAI chat completions -------------------------------------------------


def parse_openai(body: Any, temperature: float) -> ChatCall:
    """A chat-completions body -> :class:`ChatCall` (``hint`` is added by the server)."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    module = _module(body)
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise BadRequest("'messages' must be a non-empty list")
    messages: list[ChatMessage] = []
    for i, m in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            raise BadRequest(f"{where} must be an object")
        role = m.get("role")
        text = _text(m.get("content"), where)
        if role in ("system", "developer"):
            messages.append({"role": "system", "content": text})
        elif role == "user":
            messages.append({"role": "user", "content": text})
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            blocks = [
                _call_text(
                    (c.get("function") or {}).get("name"),
                    (c.get("function") or {}).get("arguments"),
                    where,
                )
                for c in calls
                if isinstance(c, dict)
            ]
            messages.append({"role": "assistant", "content": "\n".join([text, *blocks]).strip()})
        elif role in ("tool", "function"):
            messages.append(
                {"role": "user", "content": _tool_result(m.get("tool_call_id"), text, where)}
            )
        else:
            raise BadRequest(f"{where}.role {role!r} is not supported")
    if body.get("n", 1) not in (1, None):
        raise BadRequest("only n=1 is supported")
    tools = body.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise BadRequest("'tools' must be a list of objects")
    params = _params(
        body,
        max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
        stop=body.get("stop"),
        temperature=temperature,
        tools=tuple(tools),
        hint=None,
    )
    options = body.get("stream_options") or {}
    return ChatCall(
        module,
        messages,
        params,
        stream=bool(body.get("stream")),
        include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
        tools=len(tools),
        response_format=body.get("response_format"),
    )


#: the ids agentbus's own text parsers give (agentbus/llm/tools.py: call_0, call_1, ...);
#: they repeat across an episode's calls, and agents (the OpenAI Agents SDK) refuse a reused id
_POSITIONAL_ID = re.compile(r"call_\d+")


def _call_id(given: str, prefix: str, size: int) -> str:
    """The upstream's call id when it is one of its own, else a fresh unique one."""
    if given and not _POSITIONAL_ID.fullmatch(given):
        return given
    return f"{prefix}{uuid.uuid4().hex[:size]}"


def _openai_calls(result: Completion) -> list[dict[str, Any]]:
    return [
        {
            "id": _call_id(c.id, "call_", 24),
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for c in result.tool_calls
    ]


def _finish(result: Completion) -> str:
    return "tool_calls" if result.tool_calls else result.finish_reason or "stop"


def _usage(result: Completion) -> dict[str, Any]:
    return {
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "total_tokens": result.prompt_tokens + result.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": result.cached_prompt_tokens},
    }


def openai_response(module: str, result: Completion) -> dict[str, Any]:
    calls = _openai_calls(result)
    message: dict[str, Any] = {"role": "assistant", "content": result.text or None}
    if calls:
        message["tool_calls"] = calls
    elif message["content"] is None:
        message["content"] = ""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": module,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(result)}],
        "usage": _usage(result),
    }


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"


def openai_stream(module: str, result: Completion, include_usage: bool) -> bytes:
    """The whole answer as chat-completion chunks (one body: the answer is complete)."""
    rid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": module,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    out = [chunk({"role": "assistant", "content": ""})]
    if result.text:
        out.append(chunk({"content": result.text}))
    calls = _openai_calls(result)
    if calls:
        out.append(chunk({"tool_calls": [{"index": i, **c} for i, c in enumerate(calls)]}))
    out.append(chunk({}, _finish(result)))
    if include_usage:
        out.append(
            _sse(
                {
                    "id": rid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": module,
                    "choices": [],
                    "usage": _usage(result),
                }
            )
        )
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def openai_error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code or kind}}


# -- Anthropic Messages --------------------------------------------------------


def parse_anthropic(body: Any, temperature: float) -> ChatCall:
    """A Messages API body -> :class:`ChatCall`."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    module = _module(body)
    messages: list[ChatMessage] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": _text(system, "system")})
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise BadRequest("'messages' must be a non-empty list")
    for i, m in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise BadRequest(f"{where} must be an object with role user or assistant")
        messages.append({"role": m["role"], "content": _text(m.get("content"), where)})
    if body.get("max_tokens") is None:
        raise BadRequest("'max_tokens' is required")
    tools_in = body.get("tools") or []
    if not isinstance(tools_in, list) or not all(isinstance(t, dict) for t in tools_in):
        raise BadRequest("'tools' must be a list of objects")
    tools = tuple(
        {
            "type": "function",
            "function": {
                "name": t.get("name", ""),
                "description": t.get("description", ""),
                "parameters": t.get("input_schema") or {"type": "object"},
            },
        }
        for t in tools_in
    )
    params = _params(
        body,
        max_tokens=body.get("max_tokens"),
        stop=body.get("stop_sequences"),
        temperature=temperature,
        tools=tools,
        hint=None,
    )
    return ChatCall(module, messages, params, stream=bool(body.get("stream")), tools=len(tools))


def _anthropic_blocks(result: Completion) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if result.text or not result.tool_calls:
        blocks.append({"type": "text", "text": result.text})
    for c in result.tool_calls:
        try:
            args = orjson.loads(c.arguments or "{}")
        except orjson.JSONDecodeError:
            args = {}
        blocks.append(
            {
                "type": "tool_use",
                "id": _call_id(c.id, "toolu_", 24),
                "name": c.name,
                "input": args if isinstance(args, dict) else {},
            }
        )
    return blocks


def _stop_reason(result: Completion) -> str:
    if result.tool_calls:
        return "tool_use"
    return "max_tokens" if result.finish_reason == "length" else "end_turn"


def anthropic_response(module: str, result: Completion) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": module,
        "content": _anthropic_blocks(result),
        "stop_reason": _stop_reason(result),
        "stop_sequence": None,
        "usage": {
            "input_tokens": result.prompt_tokens,
            "output_tokens": result.completion_tokens,
            "cache_read_input_tokens": result.cached_prompt_tokens,
        },
    }


def anthropic_stream(module: str, result: Completion) -> bytes:
    """The whole answer as Messages stream events."""
    message = anthropic_response(module, result)
    blocks = message.pop("content")
    out = [
        _sse(
            {
                "type": "message_start",
                "message": {
                    **message,
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": result.prompt_tokens, "output_tokens": 0},
                },
            },
            "message_start",
        )
    ]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            out.append(
                _sse(
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                    "content_block_start",
                )
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            out.append(
                _sse(
                    {"type": "content_block_start", "index": i, "content_block": start},
                    "content_block_start",
                )
            )
            delta = {
                "type": "input_json_delta",
                "partial_json": orjson.dumps(block["input"]).decode(),
            }
        out.append(
            _sse({"type": "content_block_delta", "index": i, "delta": delta}, "content_block_delta")
        )
        out.append(_sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
    out.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": result.completion_tokens},
            },
            "message_delta",
        )
    )
    out.append(_sse({"type": "message_stop"}, "message_stop"))
    return b"".join(out)


def anthropic_error(message: str, kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


__all__ = [
    "BadRequest",
    "ChatCall",
    "anthropic_error",
    "anthropic_response",
    "anthropic_stream",
    "openai_error",
    "openai_response",
    "openai_stream",
    "parse_anthropic",
    "parse_openai",
]
