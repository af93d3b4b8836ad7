"""A lean OpenAI-compatible chat client for vLLM and the simulator (issue 53).

The official ``openai`` SDK builds a pydantic model of every request and
response, several layers of options and an httpx-shaped request on top of
the HTTP library: measured about 1 ms of CPU per call against our simulator,
so that the HTTP client cost more CPU than the whole framework (38-43 ms per
PRAF episode over HTTP against about 10 ms in process). A vLLM server (or the
simulator, which speaks its dialect) needs none of that: this client posts
the same JSON body the SDK would send (``orjson``) on one shared aiohttp
connection pool per endpoint and reads the answer straight from the JSON.

Failures are classified exactly as :func:`agentbus.llm.backends.base.sdk_upstream_error`
classifies the SDK's: statuses through ``kind_for_status`` (context overflow
from the message), the rate-limit headers reported to the pacing on every
answer, a refused or dropped connection as ``connection``, a read past the
timeout as ``timeout``. Streaming calls (a live sink) and the providers
(``openai:``, ``anthropic:``) keep the official SDKs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp
import orjson

from agentbus.llm.backends.base import status_error
from agentbus.llm.config import EndpointLimits
from agentbus.llm.pacing import report_headers
from agentbus.llm.retry import UpstreamError, connection_cause
from agentbus.llm.types import ChatMessage, Completion, ToolCall


class FastChat:
    """``POST {base_url}/chat/completions`` on one aiohttp pool; answers as :class:`Completion`."""

    def __init__(self, base_url: str, api_key: str, limits: EndpointLimits, label: str) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.limits = limits
        self.label = label
        self._headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        self._session: aiohttp.ClientSession | None = None

    def _pool(self) -> aiohttp.ClientSession:
        """The endpoint's one session, opened on first use (it needs the running loop)."""
        if self._session is None or self._session.closed:
            size = self.limits.max_concurrency
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=size, limit_per_host=size),
                timeout=aiohttp.ClientTimeout(
                    total=None,
                    connect=self.limits.connect_timeout,
                    sock_read=self.limits.read_timeout,
                ),
            )
        return self._session

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], options: Mapping[str, Any]
    ) -> Completion:
        """One chat completion; ``options``: the SDK's keyword arguments, ``extra_body`` merged."""
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        }
        for key, value in options.items():
            if key == "extra_body":
                body.update(value)
            elif value is not None:
                body[key] = value
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            async with self._pool().post(
                self.url, data=orjson.dumps(body), headers=self._headers
            ) as resp:
                raw = await resp.read()
                status, headers = resp.status, resp.headers
        except (aiohttp.ClientError, OSError) as exc:  # OSError: TimeoutError too
            if isinstance(exc, TimeoutError):
                raise UpstreamError(f"{self.label}: request timed out", kind="timeout") from exc
            cause = connection_cause(exc) or type(exc).__name__
            raise UpstreamError(
                f"{self.label}: connection failed ({cause})", kind="connection"
            ) from exc
        report_headers(headers)
        if status >= 400:
            raise status_error(self.label, status, *_error_text(raw), headers)
        try:
            data = orjson.loads(raw)
            choice = data["choices"][0]
            message = choice["message"]
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
            what = "response without choices" if isinstance(exc, IndexError) else "bad response"
            raise UpstreamError(f"{self.label}: {what}", kind="server") from exc
        usage = data.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        return Completion(
            text=message.get("content") or "",
            model=data.get("model") or model,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            cached_prompt_tokens=int(details.get("cached_tokens") or 0),
            latency_s=loop.time() - start,
            finish_reason=choice.get("finish_reason") or "stop",
            tool_calls=_tool_calls(message),
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def _error_text(raw: bytes) -> tuple[str, str]:
    """(message, message + type + code) of an error body, as the SDK reads them."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        text = raw.decode("utf-8", "replace")
        return text, text
    inner = body.get("error", body) if isinstance(body, dict) else body
    if not isinstance(inner, dict):
        return str(inner), str(inner)
    message = str(inner.get("message") or body)
    return message, f"{message} {inner.get('type') or ''} {inner.get('code') or ''}"


def _tool_calls(message: Mapping[str, Any]) -> list[ToolCall]:
    """The function calls of an answer message (none when it made none)."""
    return [
        ToolCall(
            id=c.get("id") or "",
            name=c["function"]["name"],
            arguments=c["function"].get("arguments") or "{}",
        )
        for c in (message.get("tool_calls") or [])
        if isinstance(c.get("function"), dict)
    ]
