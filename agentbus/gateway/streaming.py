"""A streamed gateway answer, written as the upstream produces it.

An agent that asks ``stream: true`` gets its text chunk by chunk while the
upstream model is still decoding, so the time to first token it measures is
the model's, not the whole answer's. :class:`GatewayStream` is the
:class:`~agentbus.llm.streaming.TokenSink` the gateway sets around a routed
call: the first text delta sends the response headers and the opening
chunk; each later delta goes out as it arrives. Nothing is sent before the
first delta, so a call that fails before any text still gets a plain HTTP
error (502, 400) instead of a broken stream.

:meth:`GatewayStream.finish` sends what the deltas did not carry: the text
of an answer that came whole (a cache hit, a coalesced call, a backend that
cannot stream: streamed from the answer, in word-sized chunks), the tool
calls (OpenAI ``tool_calls`` deltas: id and name, then the arguments;
Anthropic ``tool_use`` blocks with ``input_json_delta``), the finish reason
and usage. Both wire formats follow the providers' streams
(:mod:`agentbus.gateway.wire` has the non-streamed shapes).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from agentbus.gateway.wire import _finish, _usage, openai_error
from agentbus.gateway.wire_anthropic import _stop_reason, anthropic_error
from agentbus.gateway.wire_common import _call_id, _sse
from agentbus.llm.streaming import TokenSink
from agentbus.llm.types import Completion

#: at most this many chunks for text that is sent from a finished answer
WHOLE_CHUNKS = 16


def pieces(text: str, most: int = WHOLE_CHUNKS) -> list[str]:
    """``text`` in at most ``most`` chunks cut after spaces (an answer sent whole)."""
    if not text:
        return []
    words = text.split(" ")
    per = -(-len(words) // most)
    out = [" ".join(words[i : i + per]) for i in range(0, len(words), per)]
    return [p + " " for p in out[:-1]] + out[-1:]


class GatewayStream(TokenSink):
    """One streamed answer to an agent, in the OpenAI or the Anthropic format."""

    def __init__(self, request: web.Request, api: str, module: str, include_usage: bool) -> None:
        super().__init__()
        self.request = request
        self.api = api
        self.module = module
        self.include_usage = include_usage
        self.response: web.StreamResponse | None = None
        self._id = (
            f"msg_{uuid.uuid4().hex[:24]}"
            if api == "anthropic"
            else f"chatcmpl-{uuid.uuid4().hex[:24]}"
        )
        self._created = int(time.time())
        self._text_open = False

    @property
    def started(self) -> bool:
        return self.response is not None

    # -- the sink ---------------------------------------------------------------
    async def emit(self, piece: str) -> None:
        await self._start()
        await self._text(piece)

    # -- the end ----------------------------------------------------------------
    async def finish(self, result: Completion) -> web.StreamResponse:
        """Send the rest of ``result`` and end the stream (opened here if no text came)."""
        await self._start()
        rest = result.text[len(self.sent) :] if result.text.startswith(self.sent) else ""
        for piece in pieces(rest):
            await self._text(piece)
        if self.api == "anthropic":
            await self._anthropic_end(result)
        else:
            await self._openai_end(result)
        assert self.response is not None
        await self.response.write_eof()
        return self.response

    async def fail(self, message: str) -> web.StreamResponse:
        """End a started stream with an in-band error (the status line is already sent)."""
        assert self.response is not None
        if self.api == "anthropic":
            await self._write(_sse(anthropic_error(message, "api_error"), "error"))
        else:
            await self._write(_sse(openai_error(message, "api_error")) + b"data: [DONE]\n\n")
        await self.response.write_eof()
        return self.response

    # -- parts ------------------------------------------------------------------
    async def _write(self, data: bytes) -> None:
        assert self.response is not None
        await self.response.write(data)

    async def _start(self) -> None:
        if self.response is not None:
            return
        self.response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await self.response.prepare(self.request)
        if self.api == "anthropic":
            message: dict[str, Any] = {
                "id": self._id,
                "type": "message",
                "role": "assistant",
                "model": self.module,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }
            await self._write(_sse({"type": "message_start", "message": message}, "message_start"))
        else:
            await self._write(self._chunk({"role": "assistant", "content": ""}))

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": self._id,
                "object": "chat.completion.chunk",
                "created": self._created,
                "model": self.module,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    async def _text(self, piece: str) -> None:
        if self.api != "anthropic":
            await self._write(self._chunk({"content": piece}))
            return
        if not self._text_open:
            self._text_open = True
            block = {"type": "text", "text": ""}
            start = {"type": "content_block_start", "index": 0, "content_block": block}
            await self._write(_sse(start, "content_block_start"))
        delta = {"type": "text_delta", "text": piece}
        await self._write(
            _sse({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta")
        )

    async def _openai_end(self, result: Completion) -> None:
        for i, call in enumerate(result.tool_calls):
            head = {
                "index": i,
                "id": _call_id(call.id, "call_", 24),
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            await self._write(self._chunk({"tool_calls": [head]}))
            args = {"index": i, "function": {"arguments": call.arguments}}
            await self._write(self._chunk({"tool_calls": [args]}))
        await self._write(self._chunk({}, _finish(result)))
        if self.include_usage:
            usage = {
                "id": self._id,
                "object": "chat.completion.chunk",
                "created": self._created,
                "model": self.module,
                "choices": [],
                "usage": _usage(result),
            }
            await self._write(_sse(usage))
        await self._write(b"data: [DONE]\n\n")

    async def _anthropic_end(self, result: Completion) -> None:
        if not result.tool_calls and not self._text_open:
            await self._text("")  # an empty answer is one empty text block
        index = 0
        if self._text_open:
            stop = {"type": "content_block_stop", "index": 0}
            await self._write(_sse(stop, "content_block_stop"))
            index = 1
        for call in result.tool_calls:
            try:
                args = orjson.loads(call.arguments or "{}")
            except orjson.JSONDecodeError:
                args = {}
            block = {
                "type": "tool_use",
                "id": _call_id(call.id, "toolu_", 24),
                "name": call.name,
                "input": {},
            }
            start = {"type": "content_block_start", "index": index, "content_block": block}
            await self._write(_sse(start, "content_block_start"))
            partial = orjson.dumps(args if isinstance(args, dict) else {}).decode()
            delta = {"type": "input_json_delta", "partial_json": partial}
            await self._write(
                _sse(
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    "content_block_delta",
                )
            )
            await self._write(
                _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
            )
            index += 1
        usage = {
            "input_tokens": result.prompt_tokens,
            "output_tokens": result.completion_tokens,
            "cache_read_input_tokens": result.cached_prompt_tokens,
        }
        stop = {"stop_reason": _stop_reason(result), "stop_sequence": None}
        await self._write(
            _sse({"type": "message_delta", "delta": stop, "usage": usage}, "message_delta")
        )
        await self._write(_sse({"type": "message_stop"}, "message_stop"))


__all__ = ["GatewayStream", "pieces"]
