"""OpenAI and vLLM through the official ``openai`` SDK (``AsyncOpenAI``).

One ``AsyncOpenAI`` per endpoint for the whole run, with its connection pool
sized to the endpoint's concurrency limit (the SDK's default pool keeps only
100 connections alive, which silently caps throughput against a local vLLM)
and, by default, the SDK's own aiohttp transport underneath (see
``LLMConfig.http_client``).
The SDK's own retries are off: the router retries, across replicas, with the
run's limits. vLLM's extra sampling options (``top_k``, ``min_p``,
``repetition_penalty``...) travel in ``extra_body``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar, cast
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI

from agentbus.llm.backends.base import Backend, sdk_errors
from agentbus.llm.backends.openai_fast import FastChat
from agentbus.llm.config import EndpointLimits
from agentbus.llm.http_module import http_module
from agentbus.llm.pacing import report_headers
from agentbus.llm.retry import (
    UpstreamError,
)
from agentbus.llm.streaming import current_sink, read_openai_stream
from agentbus.llm.types import ChatMessage, Completion, SamplingParams, ToolCall

#: sampling options only vLLM (and the simulator) understand; OpenAI would reject them
VLLM_ONLY: frozenset[str] = frozenset(
    {
        "top_k",
        "min_p",
        "repetition_penalty",
        "length_penalty",
        "use_beam_search",
        "best_of",
        "min_tokens",
        "ignore_eos",
        "skip_special_tokens",
        "spaces_between_special_tokens",
        "guided_json",
        "guided_regex",
        "guided_choice",
        "guided_grammar",
    }
)


def http_client_for(limits: EndpointLimits, kind: str, sdk: Any = openai) -> Any:
    """The SDK's HTTP client with a pool as large as the endpoint may be asked.

    ``sdk`` is the ``openai`` or ``anthropic`` module: each ships the same two
    classes, ``DefaultAioHttpClient`` (aiohttp underneath) and
    ``DefaultAsyncHttpxClient``.
    """
    size = limits.max_concurrency
    cls = sdk.DefaultAioHttpClient if kind == "aiohttp" else sdk.DefaultAsyncHttpxClient
    http = http_module(sdk)  # httpx2 or httpx, whichever this SDK version is built on
    return cls(
        limits=http.Limits(max_connections=size, max_keepalive_connections=size),
        timeout=timeout_for(limits, sdk),
    )


def timeout_for(limits: EndpointLimits, sdk: Any = openai) -> Any:
    return http_module(sdk).Timeout(
        limits.read_timeout,
        connect=limits.connect_timeout,
        pool=limits.read_timeout,
    )


#: hosts of OpenAI's own API (and Azure's), which take ``max_completion_tokens``
_OPENAI_HOSTS = ("openai.com", "openai.azure.com")


def token_limit_param(preferred: str, endpoint: str | None) -> str:
    """The output-limit parameter the server at ``endpoint`` honours.

    OpenAI renamed ``max_tokens`` to ``max_completion_tokens``; compatible
    servers (llama.cpp, llama-cpp-python, older vLLM, most gateways) only read
    ``max_tokens`` and silently ignore the new name, which left those runs
    without any output cap. So the new name goes to OpenAI's own hosts (the
    SDK's default URL included) and the classic one everywhere else.
    """
    if preferred != "max_completion_tokens" or endpoint is None:
        return preferred
    host = (urlsplit(endpoint).hostname or "").lower()
    if any(host == h or host.endswith("." + h) for h in _OPENAI_HOSTS):
        return preferred
    return "max_tokens"


class OpenAIBackend(Backend):
    """``openai:MODEL``: OpenAI's chat completions API (or a compatible gateway)."""

    name: ClassVar[str] = "openai"
    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    #: without a key the SDK refuses to start, so a missing key is a clear UserError
    key_required: ClassVar[bool] = True
    #: a hosted API: its limit is a rate limit, so adaptive concurrency by default
    adaptive_default: ClassVar[bool] = True
    #: the token limit parameter OpenAI's own API wants (its current name)
    max_tokens_param: ClassVar[str] = "max_completion_tokens"
    supports_tools: ClassVar[bool] = True

    def setup(self) -> None:
        #: the output-limit parameter this endpoint honours (see token_limit_param)
        self.token_param = token_limit_param(self.max_tokens_param, self.endpoint)
        self._client = AsyncOpenAI(
            api_key=self._api_key(),
            base_url=self.endpoint,
            max_retries=0,
            timeout=timeout_for(self.limits),
            http_client=http_client_for(self.limits, self.context.http_client),
        )

    def request_options(self, params: SamplingParams) -> dict[str, Any]:
        """Keyword arguments of ``chat.completions.create`` for ``params``."""
        kwargs: dict[str, Any] = {
            "temperature": params.temperature,
            "top_p": params.top_p,
            self.token_param: params.max_tokens,
        }
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if params.tools:
            kwargs["tools"] = [dict(t) for t in params.tools]
        extra = self.extra_body(params)
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    def extra_body(self, params: SamplingParams) -> dict[str, Any]:
        """Backend-only options; OpenAI drops vLLM's, which its API would refuse."""
        return {k: v for k, v in params.extra.items() if k not in VLLM_ONLY}

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        start = time.perf_counter()
        sink = current_sink()  # someone streams this call (agentbus/llm/streaming.py)
        options = self.request_options(params)
        if sink is not None:
            options.update(stream=True, stream_options={"include_usage": True})
        with sdk_errors(openai, self.label):
            # the raw response too: its rate-limit headers pace the next requests
            raw = await self._client.chat.completions.with_raw_response.create(
                model=self.spec.model,
                messages=cast(
                    Any, [{"role": m["role"], "content": m["content"]} for m in messages]
                ),
                **options,
            )
            report_headers(raw.headers)
            if sink is not None:
                return await read_openai_stream(raw.parse(), sink, self.spec.model, start)
            response = raw.parse()
        latency = time.perf_counter() - start
        if not response.choices:
            raise UpstreamError(f"{self.label}: response without choices", kind="server")
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            text=choice.message.content or "",
            model=response.model or self.spec.model,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            cached_prompt_tokens=_cached_tokens(usage),
            latency_s=latency,
            finish_reason=choice.finish_reason or "stop",
            tool_calls=_tool_calls(choice.message),
        )

    async def aclose(self) -> None:
        await self._client.close()


def _cached_tokens(usage: Any) -> int:
    """Prompt tokens served from the provider's prompt cache (0 when not reported)."""
    details = getattr(usage, "prompt_tokens_details", None)
    return int(getattr(details, "cached_tokens", None) or 0)


def _tool_calls(message: Any) -> list[ToolCall]:
    """The function calls of an answer message (none when it made none)."""
    return [
        ToolCall(id=c.id or "", name=c.function.name, arguments=c.function.arguments or "{}")
        for c in (getattr(message, "tool_calls", None) or [])
        if getattr(c, "function", None) is not None
    ]


class VLLMBackend(OpenAIBackend):
    """``vllm:URL[,URL...]#MODEL``: vLLM's OpenAI-compatible server, one per URL.

    Plain calls take the lean client (:mod:`.openai_fast`: the same JSON body
    on a raw aiohttp pool, a quarter of the SDK's CPU per call); streamed calls
    and ``http_client = "httpx"`` go through the official SDK as before.
    """

    name: ClassVar[str] = "vllm"
    api_key_env: ClassVar[str | None] = "VLLM_API_KEY"
    key_required: ClassVar[bool] = False
    #: vLLM batches: a queue in front of it is what it wants, not fewer requests
    adaptive_default: ClassVar[bool] = False
    max_tokens_param: ClassVar[str] = "max_tokens"

    def setup(self) -> None:
        super().setup()
        self._fast: FastChat | None = None
        if self.context.http_client == "aiohttp" and self.endpoint is not None:
            self._fast = FastChat(self.endpoint, self._api_key(), self.limits, self.label)

    def extra_body(self, params: SamplingParams) -> dict[str, Any]:
        return dict(params.extra)

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        if self._fast is None or current_sink() is not None:
            return await super().complete(messages, params)
        return await self._fast.complete(self.spec.model, messages, self.request_options(params))

    async def aclose(self) -> None:
        if self._fast is not None:
            await self._fast.aclose()
        await super().aclose()
