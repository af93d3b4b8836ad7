"""The Anthropic Messages API on the gateway, to and from the router's chat shape."""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from agentbus.gateway.wire_common import (
    BadRequest,
    ChatCall,
    _call_id,
    _module,
    _params,
    _sse,
    _text,
)
from agentbus.llm.types import ChatMessage, Completion


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
