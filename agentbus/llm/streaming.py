"""Token streaming through the router without changing its one call shape.

``llm.complete(messages, params) -> Completion`` stays the only call: cache,
in-flight coalescing, replicas, pacing, retries and per-slot usage all work
on whole answers. A caller that wants the tokens as they come (the gateway,
for an agent that asked ``stream: true``) sets a :class:`TokenSink` around
its call with :func:`token_sink`; a backend that can stream (the OpenAI SDK
path, which the simulator's HTTP server speaks too) then asks its upstream
for a stream and hands each text delta to the sink while it assembles the
same :class:`Completion` it would have returned. The sink travels in a
context variable, like the pacing headers (:func:`agentbus.llm.pacing.headers_sink`),
so nothing between the caller and the backend needs to know.

What the sink does not see, the caller sends from the finished answer: a
cache hit or a call joined to one in flight (the answer exists already), a
backend that cannot stream, and the tool calls (sent once complete). A retry
after a partial stream starts the sink's attempt again (:meth:`TokenSink.begin`):
only text beyond what was already sent goes out, so a deterministic answer
streams once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from agentbus.llm.types import Completion, ToolCall

_sink: ContextVar[TokenSink | None] = ContextVar("agentbus_token_sink", default=None)


class TokenSink:
    """Receives an answer's text as the upstream produces it; subclass :meth:`emit`."""

    def __init__(self) -> None:
        #: text handed to :meth:`emit` so far (over every attempt)
        self.sent = ""
        self._attempt = ""

    def begin(self) -> None:
        """A (new) upstream attempt starts: its text is matched against what was sent."""
        self._attempt = ""

    async def text(self, piece: str) -> None:
        """One delta of the current attempt; the part not sent yet goes to :meth:`emit`."""
        self._attempt += piece
        if len(self._attempt) > len(self.sent) and self._attempt.startswith(self.sent):
            new = self._attempt[len(self.sent) :]
            self.sent = self._attempt
            await self.emit(new)

    async def emit(self, piece: str) -> None:  # pragma: no cover - overridden
        """Send ``piece`` on (the gateway writes it as a stream chunk)."""


@contextmanager
def token_sink(sink: TokenSink | None) -> Iterator[None]:
    """Stream the text of the calls made inside the block to ``sink`` (None: no streaming)."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


def current_sink() -> TokenSink | None:
    """The sink of the call being made, or None when nobody streams it."""
    return _sink.get()


async def read_openai_stream(stream: Any, sink: TokenSink, model: str, start: float) -> Completion:
    """Consume an OpenAI SDK chat-completion stream: text to ``sink``, the whole answer back.

    Tool calls arrive as deltas by index (id and name first, then pieces of
    the arguments) and are joined; usage comes in the last chunk when
    ``stream_options.include_usage`` was asked.
    """
    sink.begin()
    text: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish = "stop"
    usage: Any = None
    seen_model = ""
    async for chunk in stream:
        seen_model = seen_model or getattr(chunk, "model", "") or ""
        if getattr(chunk, "usage", None) is not None:
            usage = chunk.usage
        for choice in chunk.choices or ():
            delta = choice.delta
            piece = getattr(delta, "content", None)
            if piece:
                text.append(piece)
                await sink.text(piece)
            for call in getattr(delta, "tool_calls", None) or ():
                entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] = entry["id"] or (call.id or "")
                fn = call.function
                if fn is not None:
                    entry["name"] += fn.name or ""
                    entry["arguments"] += fn.arguments or ""
            if choice.finish_reason:
                finish = choice.finish_reason
    details = getattr(usage, "prompt_tokens_details", None)
    return Completion(
        text="".join(text),
        model=seen_model or model,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cached_prompt_tokens=int(getattr(details, "cached_tokens", None) or 0),
        latency_s=time.perf_counter() - start,
        finish_reason=finish,
        tool_calls=[
            ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"] or "{}")
            for _, c in sorted(calls.items())
            if c["name"]
        ],
    )


async def read_anthropic_stream(
    stream: Any, sink: TokenSink, model: str, start: float
) -> tuple[str, Any, Any, str | None, str]:
    """Consume an Anthropic SDK Messages stream: text to ``sink``.

    Returns (text, the ``message_start`` usage, the final output usage, the
    stop reason, the model); the backend turns them into its Completion as it
    does for a whole answer.
    """
    sink.begin()
    text: list[str] = []
    first_usage: Any = None
    last_usage: Any = None
    stop: str | None = None
    seen_model = model
    async for event in stream:
        kind = getattr(event, "type", "")
        if kind == "message_start":
            first_usage = event.message.usage
            seen_model = event.message.model or model
        elif kind == "content_block_delta" and getattr(event.delta, "type", "") == "text_delta":
            text.append(event.delta.text)
            await sink.text(event.delta.text)
        elif kind == "message_delta":
            stop = event.delta.stop_reason or stop
            last_usage = event.usage
    return "".join(text), first_usage, last_usage, stop, seen_model


__all__ = [
    "TokenSink",
    "current_sink",
    "read_anthropic_stream",
    "read_openai_stream",
    "token_sink",
]
