"""The simulator's wire protocols: parse a request body, format answers and errors.

Each protocol (OpenAI chat completions, OpenAI legacy completions, Anthropic
Messages) only turns a body into a :class:`Parsed` request and an answer or an
error back into its own JSON or SSE shape; the one handler in
:mod:`agentbus.sim.server` drives the engine for all of them.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.engine import SimRequest
from agentbus.sim.gateway_model import HINT as GATEWAY_HINT
from agentbus.sim.model import SimAnswer, prompt_tokens

DEFAULT_MAX_TOKENS = 4096


class BadRequest(Exception):
    """The request body is not valid for its protocol (HTTP 400)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


@dataclass
class Parsed:
    request: SimRequest
    stream: bool
    include_usage: bool = False


def _text_of(content: Any, where: str) -> str:
    """A message content: a string, or a list of text parts/blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict) and part.get("type") == "tool_result":
                parts.append(_text_of(part.get("content", ""), where))
        return "\n".join(parts)
    if content is None:
        return ""
    raise BadRequest(f"{where}: content must be a string or a list of parts", where)


def _message(answer: SimAnswer) -> dict[str, Any]:
    """The assistant message of an OpenAI chat answer, with its function calls if any."""
    if not answer.tool_calls:
        return {"role": "assistant", "content": answer.text}
    calls = [
        {
            "id": c.id or f"call_{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for i, c in enumerate(answer.tool_calls)
    ]
    return {"role": "assistant", "content": answer.text or None, "tool_calls": calls}


def _model_of(body: dict[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' is required (a sim profile name)", "model")
    return model


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"


class Protocol:
    """Parsing and formatting for one route; the base is OpenAI chat completions."""

    name = "chat"
    #: the ``object`` field of a whole answer and of a streamed chunk
    answer_object = "chat.completion"
    chunk_object = "chat.completion.chunk"

    def __init__(self) -> None:
        self.created = int(time.time())

    # -- parsing ----------------------------------------------------------
    def parse(self, body: dict[str, Any]) -> Parsed:
        model = _model_of(body)
        raw = body.get("messages")
        if not isinstance(raw, list) or not raw:
            raise BadRequest("'messages' must be a non-empty list", "messages")
        messages: list[ChatMessage] = []
        for i, m in enumerate(raw):
            if not isinstance(m, dict):
                raise BadRequest(f"messages[{i}] must be an object", f"messages[{i}]")
            role = m.get("role")
            content = _text_of(m.get("content"), f"messages[{i}]")
            if role in ("system", "developer"):
                messages.append({"role": "system", "content": content})
            elif role == "assistant":
                messages.append({"role": "assistant", "content": content})
            elif role in ("user", "tool"):
                messages.append({"role": "user", "content": content})
            else:
                raise BadRequest(f"messages[{i}].role {role!r} is not supported", "role")
        if body.get("n", 1) != 1:
            raise BadRequest("only n=1 is supported", "n")
        params = SamplingParams.from_body(
            body,
            max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
            stop=body.get("stop"),
            temperature=1.0,
            default_max_tokens=DEFAULT_MAX_TOKENS,
            error=BadRequest,
        )
        tools = body.get("tools")
        if tools is not None:
            if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
                raise BadRequest("'tools' must be a list of objects", "tools")
            params = params.model_copy(update={"tools": tuple(tools)})
        hint = body.get(GATEWAY_HINT)  # set by agentbus's gateway (sim/gateway_model.py)
        if isinstance(hint, dict):
            params = params.model_copy(update={"extra": {GATEWAY_HINT: hint}})
        options = body.get("stream_options") or {}
        return Parsed(
            SimRequest(model, messages, params),
            stream=bool(body.get("stream")),
            include_usage=bool(options.get("include_usage")),
        )

    # -- answers -----------------------------------------------------------
    def usage(self, answer: SimAnswer) -> dict[str, Any]:
        return {
            "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens,
            "total_tokens": answer.prompt_tokens + answer.completion_tokens,
        }

    def choice(self, answer: SimAnswer) -> dict[str, Any]:
        """The one choice of a whole answer."""
        return {
            "index": 0,
            "message": _message(answer),
            "logprobs": None,
            "finish_reason": answer.finish_reason,
        }

    def response(self, rid: str, model: str, answer: SimAnswer) -> dict[str, Any]:
        return {
            "id": rid,
            "object": self.answer_object,
            "created": self.created,
            "model": model,
            "choices": [self.choice(answer)],
            "usage": self.usage(answer),
        }

    def _chunk(self, rid: str, model: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": rid,
            "object": self.chunk_object,
            "created": self.created,
            "model": model,
            "choices": choices,
        }

    def stream_start(self, rid: str, model: str, parsed: Parsed) -> bytes:
        delta = {"role": "assistant", "content": ""}
        return _sse(self._chunk(rid, model, [{"index": 0, "delta": delta, "finish_reason": None}]))

    def stream_piece(self, rid: str, model: str, piece: str) -> bytes:
        choice = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
        return _sse(self._chunk(rid, model, [choice]))

    def stream_end(self, rid: str, model: str, parsed: Parsed, answer: SimAnswer) -> bytes:
        out = b""
        calls = _message(answer).get("tool_calls") or []
        if calls:  # function calls as deltas, as a provider streams them
            delta = {"tool_calls": [{"index": i, **c} for i, c in enumerate(calls)]}
            choice = {"index": 0, "delta": delta, "finish_reason": None}
            out += _sse(self._chunk(rid, model, [choice]))
        end = {"index": 0, "delta": {}, "finish_reason": answer.finish_reason}
        out += _sse(self._chunk(rid, model, [end]))
        if parsed.include_usage:
            out += _sse({**self._chunk(rid, model, []), "usage": self.usage(answer)})
        return out + b"data: [DONE]\n\n"

    # -- errors ------------------------------------------------------------
    #: the error ``type`` an HTTP status has in this protocol (else the caller's ``kind``)
    error_types: ClassVar[dict[int, str]] = {
        400: "invalid_request_error",
        404: "invalid_request_error",
        429: "rate_limit_error",
        500: "server_error",
    }

    def error(self, status: int, kind: str, message: str, param: str | None = None) -> Any:
        codes = {404: "model_not_found", 429: "rate_limit_exceeded", 500: "internal_error"}
        return {
            "error": {
                "message": message,
                "type": self.error_types.get(status, kind),
                "param": param,
                "code": codes.get(status),
            }
        }

    def stream_error(self, status: int, message: str) -> bytes:
        return _sse(self.error(status, "server_error", message)) + b"data: [DONE]\n\n"


class CompletionsProtocol(Protocol):
    """OpenAI legacy ``/v1/completions``: ``prompt`` in, ``text`` out."""

    name = "completions"
    answer_object = "text_completion"
    chunk_object = "text_completion"

    def parse(self, body: dict[str, Any]) -> Parsed:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
            prompt = prompt[0]
        if not isinstance(prompt, str):
            raise BadRequest("'prompt' must be a string (one prompt per request)", "prompt")
        chat = {**body, "messages": [{"role": "user", "content": prompt}]}
        chat.pop("prompt")
        return super().parse(chat)

    def choice(self, answer: SimAnswer) -> dict[str, Any]:
        return {
            "index": 0,
            "text": answer.text,
            "logprobs": None,
            "finish_reason": answer.finish_reason,
        }

    def stream_start(self, rid: str, model: str, parsed: Parsed) -> bytes:
        return b""

    def stream_piece(self, rid: str, model: str, piece: str) -> bytes:
        choice = {"index": 0, "text": piece, "logprobs": None, "finish_reason": None}
        return _sse(self._chunk(rid, model, [choice]))

    def stream_end(self, rid: str, model: str, parsed: Parsed, answer: SimAnswer) -> bytes:
        end = {"index": 0, "text": "", "logprobs": None, "finish_reason": answer.finish_reason}
        out = _sse(self._chunk(rid, model, [end]))
        if parsed.include_usage:
            out += _sse({**self._chunk(rid, model, []), "usage": self.usage(answer)})
        return out + b"data: [DONE]\n\n"


class AnthropicProtocol(Protocol):
    """Anthropic Messages ``/v1/messages``."""

    name = "messages"

    def parse(self, body: dict[str, Any]) -> Parsed:
        model = _model_of(body)
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise BadRequest("max_tokens: a positive integer is required", "max_tokens")
        messages: list[ChatMessage] = []
        system = _text_of(body.get("system"), "system")
        if system:
            messages.append({"role": "system", "content": system})
        raw = body.get("messages")
        if not isinstance(raw, list) or not raw:
            raise BadRequest("messages: a non-empty list is required", "messages")
        for i, m in enumerate(raw):
            role = m.get("role") if isinstance(m, dict) else None
            if role not in ("user", "assistant"):
                raise BadRequest(f"messages.{i}.role: must be 'user' or 'assistant'", "role")
            content = _text_of(m.get("content"), f"messages.{i}.content")
            messages.append({"role": role, "content": content})
        params = SamplingParams.from_body(
            body,
            max_tokens=max_tokens,
            stop=body.get("stop_sequences"),
            temperature=1.0,
            default_max_tokens=DEFAULT_MAX_TOKENS,
            error=BadRequest,
        )
        return Parsed(SimRequest(model, messages, params), stream=bool(body.get("stream")))

    @staticmethod
    def _stop_reason(answer: SimAnswer) -> str:
        if answer.finish_reason == "length":
            return "max_tokens"
        return "stop_sequence" if answer.stop_sequence else "end_turn"

    def response(self, rid: str, model: str, answer: SimAnswer) -> dict[str, Any]:
        return {
            "id": rid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": answer.text}],
            "stop_reason": self._stop_reason(answer),
            "stop_sequence": answer.stop_sequence,
            "usage": {
                "input_tokens": answer.prompt_tokens,
                "output_tokens": answer.completion_tokens,
            },
        }

    def stream_start(self, rid: str, model: str, parsed: Parsed) -> bytes:
        message: dict[str, Any] = {
            "id": rid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt_tokens(parsed.request.messages),
                "output_tokens": 0,
            },
        }
        block = {"type": "content_block_start", "index": 0}
        return _sse({"type": "message_start", "message": message}, "message_start") + _sse(
            {**block, "content_block": {"type": "text", "text": ""}}, "content_block_start"
        )

    def stream_piece(self, rid: str, model: str, piece: str) -> bytes:
        delta = {"type": "text_delta", "text": piece}
        return _sse(
            {"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"
        )

    def stream_end(self, rid: str, model: str, parsed: Parsed, answer: SimAnswer) -> bytes:
        delta = {"stop_reason": self._stop_reason(answer), "stop_sequence": answer.stop_sequence}
        return (
            _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
            + _sse(
                {
                    "type": "message_delta",
                    "delta": delta,
                    "usage": {"output_tokens": answer.completion_tokens},
                },
                "message_delta",
            )
            + _sse({"type": "message_stop"}, "message_stop")
        )

    error_types: ClassVar[dict[int, str]] = {
        400: "invalid_request_error",
        404: "not_found_error",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }

    def error(self, status: int, kind: str, message: str, param: str | None = None) -> Any:
        kind = self.error_types.get(status, kind)
        return {"type": "error", "error": {"type": kind, "message": message}}

    def stream_error(self, status: int, message: str) -> bytes:
        return _sse(self.error(status, "api_error", message), "error")
