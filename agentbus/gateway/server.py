"""The module gateway: an OpenAI- and Anthropic-compatible server in front of the router.

It listens on loopback only. Each episode registers a :class:`Session` and
hands its agent the session's token as API key and ``/e/<sid>/v1`` as base
URL (the plain ``/v1`` works too: the token alone finds the episode). A call's
``model`` names the module; the session maps it to a slot, the slot's model in
this coalition and the episode's metered client of that model, so the call
goes through the router exactly like a native module's (cache and shared
calls, replicas, pacing, retries, per-slot usage). The provider keys stay in
the router's backends; nothing the gateway sends back carries one.

When the upstream model is the simulator (``sim:``), the gateway adds which
task and module the call belongs to (``agentbus_gateway`` in the request), so
the simulator's generic gateway model (:mod:`agentbus.sim.gateway_model`) can
answer with known skill: the prompt is the user's and names neither.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson
import structlog
from aiohttp import web

from agentbus.core.errors import ContextOverflow, InfraError, UserError
from agentbus.core.listener import Listener
from agentbus.gateway import responses
from agentbus.gateway.context import AgentContext, close_each
from agentbus.gateway.limits import Limits
from agentbus.gateway.session import Refused, Session
from agentbus.gateway.streaming import GatewayStream
from agentbus.gateway.wire import openai_error, openai_response, parse_openai
from agentbus.gateway.wire_anthropic import anthropic_error, anthropic_response, parse_anthropic
from agentbus.gateway.wire_common import BadRequest, ChatCall
from agentbus.llm.streaming import token_sink
from agentbus.llm.types import Completion

log = structlog.get_logger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


class Gateway(Listener):
    """The gateway server of one run; :meth:`open` and :meth:`close` bracket each episode."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        temperature: float = 0.0,
        limits: Limits | None = None,
        responses_remote: bool = False,
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise UserError(f"the gateway listens on loopback only, not {host!r}")
        self.host = host
        self.port = port
        #: sampling temperature for calls that do not set one (the run's, so calls are shared)
        self.temperature = temperature
        self.limits = limits if limits is not None else Limits()
        #: /v1/responses may reach remote MCP servers, stored and other conversations
        self.responses_remote = responses_remote
        self.sessions: dict[str, Session] = {}
        self.root_url = ""
        self.calls = 0
        #: HTTP pools the in-process agents' SDK clients share (AgentContext.shared)
        self.pools: dict[str, Any] = {}
        #: client for passing the Responses API through to an upstream that has it
        self._client: aiohttp.ClientSession | None = None
        self.app = self._build()

    def _build(self) -> web.Application:
        app = web.Application(
            client_max_size=self.limits.body_bytes, middlewares=[self.limits.middleware(self)]
        )
        for prefix in ("", "/e/{sid}"):
            app.router.add_post(prefix + "/v1/chat/completions", self.chat)
            app.router.add_post(prefix + "/v1/messages", self.messages)
            app.router.add_post(prefix + "/v1/responses", self.responses)
            app.router.add_get(prefix + "/v1/models", self.models)
            app.router.add_get(prefix + "/v1/models/{model}", self.model)
        return app

    # -- lifecycle ------------------------------------------------------------
    async def start(self) -> str:
        """Listen on loopback (port 0: a free one); returns the root URL."""
        self.root_url = await self.listen(
            self.app, {"backlog": 4096}, handle_signals=False, **self.limits.handler_args()
        )
        log.info("gateway.started", url=self.root_url)
        return self.root_url

    async def stop(self) -> None:
        await close_each(pool.aclose for pool in self.pools.values())
        self.pools.clear()
        if self._client is not None:
            await self._client.close()
            self._client = None
        await super().stop()

    def open(self, session: Session) -> AgentContext:
        """Register an episode; the context carries its URLs and token."""
        self.sessions[session.token] = session
        episode_root = f"{self.root_url}/e/{session.sid}"
        return AgentContext(
            task_id=session.task_id,
            base_url=f"{episode_root}/v1",
            anthropic_base_url=episode_root,
            api_key=session.token,
            off_slots=session.off,
            shared=self.pools,
        )

    def close(self, session: Session) -> None:
        """The episode is over: its token stops working at once."""
        self.sessions.pop(session.token, None)

    # -- requests ---------------------------------------------------------------
    def _session(self, request: web.Request) -> Session | None:
        """The episode a request's token (and, on ``/e/<sid>``, its path) belongs to."""
        token = request.headers.get("x-api-key")
        if token is None:
            auth = request.headers.get("Authorization", "")
            if auth[:7].lower() == "bearer ":
                token = auth[7:].strip()
        if not token:
            return None
        session = self.sessions.get(token)
        if session is None:
            return None
        sid = request.match_info.get("sid")
        if sid is not None and sid != session.sid:
            return None
        return session

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self._call(request, "openai")

    async def messages(self, request: web.Request) -> web.StreamResponse:
        return await self._call(request, "anthropic")

    async def responses(self, request: web.Request) -> web.StreamResponse:
        """The Responses API, passed through (:func:`agentbus.gateway.responses.handle`)."""
        return await responses.handle(self, request)

    def _http(self) -> aiohttp.ClientSession:
        if self._client is None:
            self._client = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(total=600),
            )
        return self._client

    async def models(self, request: web.Request) -> web.StreamResponse:
        session = self._session(request)
        if session is None:
            return self._unauthorized("openai")
        names = [s for s in session.all_slots if s not in session.off]
        return _json(
            {
                "object": "list",
                "data": [
                    {"id": n, "object": "model", "created": 0, "owned_by": "agentbus"}
                    for n in names
                ],
            }
        )

    async def model(self, request: web.Request) -> web.StreamResponse:
        session = self._session(request)
        if session is None:
            return self._unauthorized("openai")
        name = request.match_info["model"]
        if name not in session.slots and session.fallback is None:
            return _json(openai_error(f"no module {name!r} in this run", "not_found"), 404)
        return _json({"id": name, "object": "model", "created": 0, "owned_by": "agentbus"})

    def _unauthorized(self, api: str) -> web.Response:
        message = (
            "unknown or expired episode token: use the API key agentbus gave this "
            "episode (OPENAI_API_KEY / ANTHROPIC_API_KEY), valid only while it runs"
        )
        if api == "anthropic":
            return _json(anthropic_error(message, "authentication_error"), 401)
        return _json(openai_error(message, "authentication_error", "invalid_api_key"), 401)

    @staticmethod
    def _error(api: str, status: int, message: str, kind: str) -> web.Response:
        if api == "anthropic":
            return _json(anthropic_error(message, kind), status)
        return _json(openai_error(message, kind), status)

    async def _call(self, request: web.Request, api: str) -> web.StreamResponse:
        session = self._session(request)
        if session is None:
            return self._unauthorized(api)
        try:
            body = orjson.loads(await request.read())
            parse = parse_anthropic if api == "anthropic" else parse_openai
            call = parse(body, self.temperature)
        except orjson.JSONDecodeError:
            return self._error(api, 400, "the body is not valid JSON", "invalid_request_error")
        except BadRequest as exc:
            return self._error(api, 400, str(exc), "invalid_request_error")
        try:
            route = session.route(call.module)
        except Refused as exc:
            await session.refused_call(call.module, str(exc))
            return self._error(api, exc.status, str(exc), exc.kind)
        params = call.params
        if route.model.startswith("sim:"):  # the generic gateway model needs task and module
            hint = {"task": session.task_id, "module": call.module}
            if call.response_format is not None:  # structured outputs: the answer follows it
                hint["format"] = call.response_format
            params = params.model_copy(update={"extra": {**params.extra, "agentbus_gateway": hint}})
        self.calls += 1
        number = await session.requested(
            route,
            api=api,
            messages=[dict(m) for m in call.messages],
            tools=call.tools,
            stream=call.stream,
        )
        session.stats(call.module)  # the module is listed even when its call fails
        started = time.perf_counter()
        # a streamed answer goes out as the upstream produces it (agentbus/gateway/streaming.py)
        sink = GatewayStream(request, api, call.module, call.include_usage) if call.stream else None
        try:
            with token_sink(sink):
                result = await route.llm.complete(call.messages, params)
        except InfraError as exc:
            session.infra_error = session.infra_error or str(exc)
            await session.answered(route, number, error=str(exc))
            if sink is not None and sink.started:
                return await sink.fail(f"upstream model failed: {exc}")
            return self._error(api, 502, f"upstream model failed: {exc}", "api_error")
        except ContextOverflow as exc:
            await session.answered(route, number, error=str(exc))
            if sink is not None and sink.started:
                return await sink.fail(str(exc))
            return self._error(api, 400, str(exc), "context_length_exceeded")
        took_s = time.perf_counter() - started
        session.count(call.module, result.prompt_tokens, result.completion_tokens, took_s)
        await session.answered(
            route,
            number,
            text=result.text,
            tool_calls=[c.model_dump() for c in result.tool_calls],
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            latency_s=result.latency_s,
            cached=result.cached,
        )
        if sink is not None:
            return await sink.finish(result)
        return self._reply(api, call, result)

    @staticmethod
    def _reply(api: str, call: ChatCall, result: Completion) -> web.Response:
        """A whole (non-streamed) answer; streams go through GatewayStream."""
        if api == "anthropic":
            return _json(anthropic_response(call.module, result))
        return _json(openai_response(call.module, result))


__all__ = ["Gateway"]
