"""The two wire formats the gateway speaks, to and from the router's one chat shape.

This module holds the OpenAI chat-completions format and keeps the gateway's
old import path: the shared request parts are in
:mod:`agentbus.gateway.wire_common` and the Anthropic Messages format in
:mod:`agentbus.gateway.wire_anthropic`, both imported back here.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from agentbus.gateway.wire_common import (
    BadRequest,
    ChatCall,
    _call_id,
    _call_text,
    _module,
    _params,
    _sse,
    _text,
    _tool_result,
)
from agentbus.llm.types import ChatMessage, Completion

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


__all__ = ["openai_error", "openai_response", "openai_stream", "parse_openai"]
