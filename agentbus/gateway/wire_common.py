"""What both gateway wire formats share: the parsed request and its common fields.

The router (and every backend behind it) takes plain chat turns: system, user
and assistant text, tools offered as OpenAI function schemas, and answers with
text plus structured tool calls. An agent's conversation can hold more:
assistant turns that called tools and the tool results that came back. Those
are written into the text the way a chat template does for a model without
native function calling: a call as a ``<tool_call>{...}</tool_call>`` block
(:func:`agentbus.llm.tools.format_tool_call`) and a result as a user turn
naming the call it answers. A model reads the same conversation; no backend
needs to learn a second message shape. The OpenAI format lives in
:mod:`agentbus.gateway.wire`, Anthropic's in :mod:`agentbus.gateway.wire_anthropic`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

import orjson

from agentbus.llm.tools import format_tool_call
from agentbus.llm.types import ChatMessage, SamplingParams

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
    return SamplingParams.from_body(
        body,
        max_tokens=max_tokens,
        stop=stop,
        temperature=temperature,
        default_max_tokens=DEFAULT_MAX_TOKENS,
        error=lambda message, _param: BadRequest(message),
        tools=tools,
        extra={"agentbus_gateway": hint} if hint else {},
    )


def _module(body: dict[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' is required: it names the module making the call")
    return model


#: the ids agentbus's own text parsers give (agentbus/llm/tools.py: call_0, call_1, ...);
#: they repeat across an episode's calls, and agents (the OpenAI Agents SDK) refuse a reused id
_POSITIONAL_ID = re.compile(r"call_\d+")


def _call_id(given: str, prefix: str, size: int) -> str:
    """The upstream's call id when it is one of its own, else a fresh unique one."""
    if given and not _POSITIONAL_ID.fullmatch(given):
        return given
    return f"{prefix}{uuid.uuid4().hex[:size]}"


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"
