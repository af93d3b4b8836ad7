"""The Responses API passed through to an OpenAI-style upstream, with what it may reach.

Passing a body through as it is would hand the agent the provider account
behind agentbus's key: a remote MCP tool (``server_url``) makes the upstream
call a server the agent names, ``previous_response_id`` or ``conversation``
reads a conversation another episode (or another user of the key) held, and
``store`` keeps this one on the provider for later. Those are refused unless
the run allows them (``--responses-remote``); ``store`` is sent as false
when the agent does not set it. A ``previous_response_id`` that this episode
itself got back is always allowed. The upstream's answer, streamed or not,
goes through the same secret scrubber as logs and files
(:func:`agentbus.core.logs.scrub_bytes`), so a key it echoes never reaches the
agent.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from typing import Any, Protocol

import aiohttp
import orjson
from aiohttp import web

from agentbus.core.logs import scrub_bytes
from agentbus.gateway.session import Refused, Session
from agentbus.gateway.wire import openai_error

#: tool fields that make the upstream connect to a server the agent names
REMOTE_TOOL_KEYS = ("server_url", "connector_id", "server_label")
#: tool types that run on the provider's side against remote servers
REMOTE_TOOL_TYPES = ("mcp",)


def refusal(body: dict[str, Any], own_ids: set[str], allow_remote: bool) -> str | None:
    """Why this Responses body may not be passed through, or None (then it may)."""
    if allow_remote:
        return None
    for tool in body.get("tools") or ():
        if isinstance(tool, dict) and (
            tool.get("type") in REMOTE_TOOL_TYPES or any(k in tool for k in REMOTE_TOOL_KEYS)
        ):
            return (
                "remote MCP tools (type 'mcp', 'server_url') are refused: the provider "
                "would call a server with agentbus's account; a run allows them with "
                "--responses-remote"
            )
    previous = body.get("previous_response_id")
    if previous is not None and previous not in own_ids:
        return (
            f"previous_response_id {previous!r} is not a response of this episode; "
            "a run allows other conversations with --responses-remote"
        )
    if body.get("conversation") is not None:
        return "'conversation' is refused (another conversation); see --responses-remote"
    if body.get("store"):
        return (
            "store=true is refused (the provider would keep this episode); see --responses-remote"
        )
    return None


def outgoing(body: dict[str, Any], model: str, allow_remote: bool) -> dict[str, Any]:
    """The body sent upstream: the slot's model name, and ``store`` false unless allowed."""
    out = {**body, "model": model}
    if not allow_remote:
        out.setdefault("store", False)
    return out


async def scrubbed_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """A byte stream scrubbed line by line (a secret split across chunks is still found)."""
    pending = b""
    async for chunk in chunks:
        pending += chunk
        cut = pending.rfind(b"\n")
        if cut < 0:
            continue
        yield scrub_bytes(pending[: cut + 1])
        pending = pending[cut + 1 :]
    if pending:
        yield scrub_bytes(pending)


class GatewayHost(Protocol):
    """What :func:`handle` needs of the gateway (a structural type).

    The gateway (:mod:`agentbus.gateway.server`) routes ``/v1/responses`` here;
    naming only this protocol keeps this module from importing the server back.
    """

    responses_remote: bool

    def _session(self, request: web.Request) -> Session | None: ...

    def _unauthorized(self, api: str) -> web.Response: ...

    def _error(self, api: str, status: int, message: str, kind: str) -> web.Response: ...

    def _http(self) -> aiohttp.ClientSession: ...


async def handle(gateway: GatewayHost, request: web.Request) -> web.StreamResponse:
    """The Responses API, passed through to an OpenAI-style upstream that has it.

    The call still goes to the module's slot model of this coalition, but
    around the router (no shared calls, retries or per-slot usage): the
    upstream's answer is returned scrubbed of secrets, an upstream error
    becomes a plain message (a provider's error text can quote part of
    the key), and fields that reach other servers or conversations are
    refused (above). Upstreams without the API (the simulator, Anthropic)
    get a 501 saying to use chat completions.
    """
    session = gateway._session(request)
    if session is None:
        return gateway._unauthorized("openai")
    try:
        body = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        return gateway._error("openai", 400, "the body is not valid JSON", "invalid_request_error")
    module = body.get("model") if isinstance(body, dict) else None
    if not isinstance(module, str) or not module:
        return gateway._error(
            "openai", 400, "'model' is required: it names the module", "invalid_request_error"
        )
    try:
        route = session.route(module)
    except Refused as exc:
        return gateway._error("openai", exc.status, str(exc), exc.kind)
    refused = refusal(body, session.response_ids, gateway.responses_remote)
    if refused is not None:
        return gateway._error("openai", 400, refused, "invalid_request_error")
    upstream = responses_upstream(route.llm)
    if upstream is None:
        message = (
            f"module {module!r} runs on {route.model}, which has no Responses API "
            "here; use the chat completions API (/v1/chat/completions) or the "
            "Anthropic Messages API (/v1/messages) (OpenAI Agents SDK: "
            "set_default_openai_api('chat_completions'))"
        )
        return web.Response(
            body=orjson.dumps(openai_error(message, "not_implemented")),
            status=501,
            content_type="application/json",
        )
    base, key, model = upstream
    number = await session.requested(
        route,
        api="responses",
        messages=[{"role": "user", "content": str(body.get("input", ""))}],
        stream=bool(body.get("stream")),
    )
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    started = time.perf_counter()
    http = gateway._http()
    try:
        async with http.post(
            f"{base}/responses",
            data=orjson.dumps(outgoing(body, model, gateway.responses_remote)),
            headers=headers,
        ) as upstream_response:
            status = upstream_response.status
            if status >= 400:
                await upstream_response.read()
                error = f"upstream answered HTTP {status} to the Responses API"
                await session.answered(route, number, error=error)
                return gateway._error("openai", status, error, "upstream_error")
            if body.get("stream"):
                stream = web.StreamResponse(
                    headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
                )
                await stream.prepare(request)
                async for chunk in scrubbed_lines(upstream_response.content.iter_any()):
                    await stream.write(chunk)
                await stream.write_eof()
                result: dict[str, Any] = {}
                raw = b""
            else:
                raw = scrub_bytes(await upstream_response.read())
                result = orjson.loads(raw)
                if isinstance(result.get("id"), str):
                    session.response_ids.add(result["id"])
    except (aiohttp.ClientError, TimeoutError, orjson.JSONDecodeError) as exc:
        error = f"upstream Responses API failed: {type(exc).__name__}"
        await session.answered(route, number, error=error)
        return gateway._error("openai", 502, error, "api_error")
    usage = result.get("usage") or {}
    prompt_tokens = int(usage.get("input_tokens") or 0)
    completion_tokens = int(usage.get("output_tokens") or 0)
    session.count(module, prompt_tokens, completion_tokens, time.perf_counter() - started)
    await session.answered(
        route,
        number,
        text=str(result.get("output_text", "")),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )
    if body.get("stream"):
        return stream
    return web.Response(body=raw, content_type="application/json")


def responses_upstream(llm: Any) -> tuple[str, str | None, str] | None:
    """(base URL, key, model) of an OpenAI-style upstream of ``llm``, or None.

    Reaches through the per-episode meter and the router's handle to the
    first replica's backend: only ``openai:`` and ``vllm:`` models qualify.
    """
    inner = getattr(llm, "_inner", llm)
    spec = getattr(inner, "spec", None)
    replicas = getattr(getattr(inner, "_client", None), "replicas", None)
    if spec is None or not replicas or spec.backend not in ("openai", "vllm"):
        return None
    backend = replicas[0].backend
    base = backend.endpoint or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    try:
        key: str | None = backend._api_key()
    except Exception:
        key = None
    return str(base).rstrip("/"), key, spec.model


__all__ = ["GatewayHost", "handle", "outgoing", "refusal", "responses_upstream", "scrubbed_lines"]
