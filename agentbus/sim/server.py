"""The simulator's HTTP face: OpenAI- and Anthropic-compatible routes on aiohttp.

Routes:

* ``POST /v1/chat/completions``: OpenAI chat (``stream`` too, with
  ``stream_options.include_usage``), SSE ending in ``data: [DONE]``;
* ``POST /v1/completions``: OpenAI legacy text completions (the prompt
  becomes one user message);
* ``POST /v1/messages``: Anthropic Messages (``system`` parameter, content
  blocks, ``stop_reason``, ``usage.input_tokens/output_tokens``, streaming
  events ``message_start`` ... ``message_stop``);
* ``GET /v1/models``, ``GET /health``, ``GET /metrics`` (vLLM's Prometheus
  names: requests running and waiting, KV-cache usage; :mod:`.prometheus`),
  ``GET /metrics.json`` (every counter as JSON).

The model name in a request is the profile name. Each route is a
:class:`Protocol` that only parses the body and formats answers and errors;
one handler (:meth:`SimServer.handle`) drives :class:`SimEngine` for all of
them, so faults, serving time and metrics are identical across protocols.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import orjson
from aiohttp import web

from agentbus.core.errors import UserError
from agentbus.sim.engine import SimEngine, SimRequest
from agentbus.sim.faults import (
    SimConnectionDropped,
    SimContextOverflow,
    SimFault,
    SimRateLimited,
)
from agentbus.sim.prometheus import CONTENT_TYPE as PROMETHEUS_CONTENT_TYPE
from agentbus.sim.prometheus import registry_for, render
from agentbus.sim.protocols import (
    AnthropicProtocol,
    BadRequest,
    CompletionsProtocol,
    Protocol,
    _new_id,
)


@web.middleware
async def _json_http_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Unknown routes and wrong methods answer in the OpenAI error shape, not HTML."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        body = {
            "error": {
                "message": f"{request.method} {request.path}: {exc.reason}",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        }
        return web.Response(
            body=orjson.dumps(body), status=exc.status, content_type="application/json"
        )
    except Exception as exc:  # logged by the engine; the client gets a 500 like from vLLM
        body = {
            "error": {
                "message": f"internal error: {type(exc).__name__}: {exc}",
                "type": "server_error",
                "param": None,
                "code": "internal_error",
            }
        }
        return web.Response(body=orjson.dumps(body), status=500, content_type="application/json")


def _keyed(req: SimRequest, request: web.Request, proto: Protocol) -> SimRequest:
    """The request with its API key and protocol style (provider limits are per key)."""
    auth = request.headers.get("Authorization", "")
    key = request.headers.get("x-api-key") or auth.removeprefix("Bearer ").strip()
    style = "anthropic" if proto.name == "messages" else "openai"
    return dataclasses.replace(req, key=key, style=style)


def _with_cached_usage(data: dict[str, Any], meta: dict[str, Any], body: Any) -> dict[str, Any]:
    """Report prefix-cache hits the way each provider does.

    OpenAI: ``usage.prompt_tokens_details.cached_tokens`` (automatic caching).
    Anthropic: ``cache_read_input_tokens`` only when the request marked a
    ``cache_control`` breakpoint, and ``input_tokens`` then counts the rest.
    """
    cached = int(meta.get("cached_tokens") or 0)
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return data
    if "prompt_tokens" in usage:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    elif "input_tokens" in usage:
        marked = "cache_control" in orjson.dumps(body.get("system")).decode() or any(
            "cache_control" in orjson.dumps(m).decode() for m in body.get("messages", [])[:2]
        )
        cached = cached if marked else 0
        usage["input_tokens"] = max(0, usage["input_tokens"] - cached)
        usage["cache_read_input_tokens"] = cached
        usage["cache_creation_input_tokens"] = 0
    return data


class SimServer:
    """The aiohttp application around one :class:`SimEngine`."""

    def __init__(self, engine: SimEngine) -> None:
        self.engine = engine
        self.app = web.Application(
            client_max_size=64 * 1024 * 1024, middlewares=[_json_http_errors]
        )
        chat, completions, messages = Protocol(), CompletionsProtocol(), AnthropicProtocol()
        self.app.router.add_post("/v1/chat/completions", self._route(chat))
        self.app.router.add_post("/v1/completions", self._route(completions))
        self.app.router.add_post("/v1/messages", self._route(messages))
        self.app.router.add_get("/v1/models", self.models)
        self.app.router.add_get("/health", self.health)
        self.app.router.add_get("/metrics", self.prometheus)
        self.app.router.add_get("/metrics.json", self.metrics)
        self._registry = registry_for(engine)

    def _route(self, proto: Protocol) -> Callable[[web.Request], Any]:
        async def route(request: web.Request) -> web.StreamResponse:
            return await self.handle(request, proto)

        return route

    @staticmethod
    def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
        return web.Response(
            body=orjson.dumps(data),
            status=status,
            content_type="application/json",
            headers=headers,
        )

    async def handle(self, request: web.Request, proto: Protocol) -> web.StreamResponse:
        """The one handler core: parse, run the engine, format (or fail) per protocol."""
        try:
            body = orjson.loads(await request.read())
            if not isinstance(body, dict):
                raise BadRequest("the request body must be a JSON object")
            parsed = proto.parse(body)
        except orjson.JSONDecodeError:
            self.engine.metrics.by_status["400"] += 1
            return self._json(proto.error(400, "invalid_request_error", "invalid JSON"), 400)
        except BadRequest as exc:
            self.engine.metrics.by_status["400"] += 1
            return self._json(proto.error(400, "invalid_request_error", str(exc), exc.param), 400)

        req = parsed.request = _keyed(parsed.request, request, proto)
        meta: dict[str, Any] = {}
        rid = _new_id("msg_" if proto.name == "messages" else "chatcmpl-")
        stream: web.StreamResponse | None = None

        async def emit(pieces: Sequence[str]) -> None:
            nonlocal stream
            head = b""
            if stream is None:
                stream = await self._open_stream(request, meta.get("headers"))
                head = proto.stream_start(rid, req.model, parsed)
            await stream.write(
                head + b"".join(proto.stream_piece(rid, req.model, p) for p in pieces)
            )

        try:
            answer = await self.engine.run(req, emit if parsed.stream else None, meta)
        except ConnectionResetError:  # the client hung up mid-stream: nothing to answer
            return stream or web.Response(status=499)
        except SimConnectionDropped:
            if request.transport is not None:
                request.transport.abort()
            return stream or web.Response(status=500)
        except (SimFault, UserError) as exc:
            status = 404 if isinstance(exc, UserError) else (exc.status or 500)
            headers: dict[str, str] = {}
            if isinstance(exc, SimRateLimited) and exc.retry_after is not None:
                headers["Retry-After"] = f"{exc.retry_after:g}"
                headers["retry-after-ms"] = str(int(exc.retry_after * 1000))
            if isinstance(exc, SimFault):
                headers.update(exc.headers)
            if stream is not None:  # already streaming: report in-band, then end
                await stream.write(proto.stream_error(status, str(exc)))
                await stream.write_eof()
                return stream
            body = proto.error(status, "api_error", str(exc))
            if isinstance(exc, SimContextOverflow):  # the server's own error type and code
                body["error"]["type"] = exc.error_type
                if exc.code is not None:
                    body["error"]["code"] = exc.code
            return self._json(body, status, headers)

        if not parsed.stream:
            data = _with_cached_usage(proto.response(rid, req.model, answer), meta, body)
            return self._json(data, headers=meta.get("headers"))
        if stream is None:  # empty answer: nothing was emitted yet
            stream = await self._open_stream(request, meta.get("headers"))
            await stream.write(proto.stream_start(rid, req.model, parsed))
        await stream.write(proto.stream_end(rid, req.model, parsed, answer))
        await stream.write_eof()
        return stream

    @staticmethod
    async def _open_stream(
        request: web.Request, extra: dict[str, str] | None = None
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                **(extra or {}),
            }
        )
        await resp.prepare(request)
        return resp

    async def models(self, request: web.Request) -> web.Response:
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "agentbus-sim"}
            for name in self.engine.model.profiles.names()
        ]
        return self._json({"object": "list", "data": data})

    async def health(self, request: web.Request) -> web.Response:
        return self._json({"status": "ok"})

    async def prometheus(self, request: web.Request) -> web.Response:
        return web.Response(
            body=render(self._registry), headers={"Content-Type": PROMETHEUS_CONTENT_TYPE}
        )

    async def metrics(self, request: web.Request) -> web.Response:
        return self._json(self.engine.snapshot())
