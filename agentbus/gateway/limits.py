"""What the gateway reads from an agent, bounded: body size, headers, requests in flight.

Every byte a request carries is the agent's choice, and the agent is
untrusted (docs/security.md): one 64 MiB JSON body took agentbus from about
100 MB to 2 GB of memory before these caps (the body is read, then parsed
into Python objects several times its size). aiohttp already stops header
lines and fields at 8 KiB and counts headers; the body is refused past
``body_bytes`` while it is read, and an episode has at most ``per_episode``
requests in flight (an agent that opens thousands of connections holds as
many buffers). Past the body cap the episode is marked: its agent fails
with the cap named, whatever it prints afterwards.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from aiohttp import web

from agentbus.gateway.session import Session
from agentbus.gateway.wire import openai_error
from agentbus.gateway.wire_anthropic import anthropic_error

MIB = 1024 * 1024

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class _FindsSessions(Protocol):
    def _session(self, request: web.Request) -> Session | None: ...


@dataclass(frozen=True)
class Limits:
    """The gateway's input bounds (one set per run)."""

    #: largest request body read (``--gateway-body-mb``, default 16 MiB)
    body_bytes: int = 16 * MIB
    #: longest request line and header field
    max_line_bytes: int = 8190
    #: most header fields in one request
    max_headers: int = 64
    #: requests of one episode in flight at once (more are answered 429)
    per_episode: int = 64

    def handler_args(self) -> dict[str, Any]:
        """aiohttp's per-connection parser limits."""
        return {
            "max_line_size": self.max_line_bytes,
            "max_field_size": self.max_line_bytes,
            "max_headers": self.max_headers,
        }

    def body_reason(self) -> str:
        return (
            f"a request body was larger than the gateway's cap of {self.body_bytes / MIB:g} MiB "
            "(--gateway-body-mb)"
        )

    def middleware(self, gateway: _FindsSessions) -> Any:
        """Counts each episode's requests in flight and turns an oversized body into 413."""
        inflight: dict[str, int] = {}

        @web.middleware
        async def bounded(request: web.Request, handler: Handler) -> web.StreamResponse:
            session = gateway._session(request)
            if session is None:
                return await handler(request)
            api = "anthropic" if request.path.endswith("/v1/messages") else "openai"
            token = session.token
            if inflight.get(token, 0) >= self.per_episode:
                return _error(
                    api,
                    429,
                    f"more than {self.per_episode} requests of this episode at once",
                    "rate_limit_error",
                )
            inflight[token] = inflight.get(token, 0) + 1
            try:
                return await handler(request)
            except web.HTTPRequestEntityTooLarge:
                reason = self.body_reason()
                session.violation = session.violation or reason
                return _error(api, 413, reason, "invalid_request_error")
            finally:
                left = inflight.pop(token) - 1
                if left:
                    inflight[token] = left

        return bounded


def _error(api: str, status: int, message: str, kind: str) -> web.Response:
    data = anthropic_error(message, kind) if api == "anthropic" else openai_error(message, kind)
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


__all__ = ["MIB", "Limits"]
