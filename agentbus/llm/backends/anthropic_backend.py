"""Anthropic through the official ``anthropic`` SDK (``AsyncAnthropic``).

The Messages API differs from chat completions in three ways that matter:
the system prompt is a separate ``system=`` argument, only ``user`` and
``assistant`` turns exist, and two turns in a row from the same role are
refused. :func:`to_messages_api` maps our OpenAI-shaped chat onto it:
system turns are joined into ``system``, consecutive same-role turns are
merged with a blank line between them.

Sampling: the current ``anthropic`` SDK has no ``temperature`` or ``top_p``
arguments any more (recent Claude models fix their sampling), and Anthropic
has no seed. Against Anthropic itself we therefore send none of them, and a
seed or temperature only shapes the cache key. A compatible server named by
URL (``anthropic:URL#MODEL`` or ANTHROPIC_BASE_URL: a gateway, vLLM's
Messages route, the simulator) still honours them, so there ``temperature``
(and ``top_p`` when not 1) travel in ``extra_body``; without them such a
server samples at its default temperature 1 and the answers stop being
reproducible.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import anthropic
from anthropic import AsyncAnthropic

from agentbus.llm.backends.base import Backend, sdk_errors
from agentbus.llm.backends.openai_backend import http_client_for, timeout_for
from agentbus.llm.pacing import report_headers
from agentbus.llm.streaming import current_sink, read_anthropic_stream
from agentbus.llm.types import ChatMessage, Completion, SamplingParams

#: Anthropic's stop reasons in OpenAI's words; the context window ending an answer is a
#: cut like ``max_tokens`` (the router then finds it short of its limit: an overflow)
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}


def to_messages_api(messages: Sequence[ChatMessage]) -> tuple[str, list[dict[str, str]]]:
    """Split ``messages`` into Anthropic's ``system`` text and alternating turns."""
    system: list[str] = []
    turns: list[dict[str, str]] = []
    for m in messages:
        role, content = m["role"], m["content"]
        if role == "system":
            system.append(content)
        elif turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + content
        else:
            turns.append({"role": role, "content": content})
    return "\n\n".join(system), turns


#: Anthropic's prompt-cache breakpoint (the prefix up to it is cached for minutes)
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}


def cache_marked_turns(turns: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The turns with a cache breakpoint after the first section of the first user turn.

    Prompts put what every call of a task shares first: the system prompt
    (role, instructions, the environment's guide; marked by the caller) and
    then the task, as the first ``## `` section of the user message (see
    docs/prompt-contract.md). Anthropic caches a prefix only up to a marked
    block, so that first section becomes a block of its own with
    ``cache_control``; OpenAI caches the longest shared prefix by itself. The
    split keeps the text: the blocks read the same joined with a newline.
    """
    if not turns or turns[0]["role"] != "user":
        return list(turns)
    text = turns[0]["content"]
    cut = text.find("\n\n## ") if text.startswith("## ") else -1
    if cut < 0:
        return list(turns)
    blocks = [
        {"type": "text", "text": text[: cut + 1], "cache_control": EPHEMERAL},
        {"type": "text", "text": text[cut + 2 :]},
    ]
    return [{"role": "user", "content": blocks}, *turns[1:]]


class AnthropicBackend(Backend):
    """``anthropic:MODEL`` (or ``anthropic:URL#MODEL`` for a compatible server)."""

    name: ClassVar[str] = "anthropic"
    api_key_env: ClassVar[str | None] = "ANTHROPIC_API_KEY"
    key_required: ClassVar[bool] = True
    adaptive_default: ClassVar[bool] = True

    def setup(self) -> None:
        self._client = AsyncAnthropic(
            api_key=self._api_key(),
            base_url=_sdk_base_url(self.endpoint),
            max_retries=0,
            timeout=timeout_for(self.limits, anthropic),
            http_client=http_client_for(self.limits, self.context.http_client, anthropic),
        )

    def request_options(self, messages: Sequence[ChatMessage], params: SamplingParams) -> dict:
        system, turns = to_messages_api(messages)
        kwargs: dict[str, Any] = {
            "model": self.spec.model,
            "messages": cache_marked_turns(turns),
            "max_tokens": params.max_tokens,
        }
        if system:
            kwargs["system"] = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
        if params.stop:
            kwargs["stop_sequences"] = list(params.stop)
        body: dict[str, Any] = {}
        if self.endpoint is not None:  # a compatible server: it still takes sampling options
            body["temperature"] = params.temperature
            if params.top_p != 1.0:
                body["top_p"] = params.top_p
        body.update(params.extra)
        if body:
            kwargs["extra_body"] = body
        return kwargs

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        start = time.perf_counter()
        sink = current_sink()  # someone streams this call (agentbus/llm/streaming.py)
        with sdk_errors(anthropic, self.label):
            if sink is not None:
                return await self._streamed(messages, params, sink, start)
            # the raw response too: its rate-limit headers pace the next requests
            raw = await self._client.messages.with_raw_response.create(
                **self.request_options(messages, params)
            )
            report_headers(raw.headers)
            response = raw.parse()  # async from anthropic 2 on, plain before
            if inspect.isawaitable(response):
                response = await response
        latency = time.perf_counter() - start
        text = "".join(
            getattr(block, "text", "") for block in response.content if block.type == "text"
        )
        usage = response.usage
        return Completion(
            text=text,
            model=response.model or self.spec.model,
            # Anthropic's input_tokens leaves out cache reads and writes; the
            # prompt is all three (OpenAI's convention, which the prices use)
            prompt_tokens=_prompt_tokens(usage),
            completion_tokens=usage.output_tokens if usage else 0,
            cached_prompt_tokens=int(getattr(usage, "cache_read_input_tokens", None) or 0),
            latency_s=latency,
            finish_reason=_FINISH.get(response.stop_reason or "end_turn", "stop"),
        )

    async def _streamed(
        self, messages: Sequence[ChatMessage], params: SamplingParams, sink: Any, start: float
    ) -> Completion:
        """The answer as a Messages stream, its text handed to ``sink`` as it comes."""
        raw = await self._client.messages.with_raw_response.create(
            **self.request_options(messages, params), stream=True
        )
        report_headers(raw.headers)
        stream = raw.parse()
        if inspect.isawaitable(stream):
            stream = await stream
        text, first, last, stop, model = await read_anthropic_stream(
            stream, sink, self.spec.model, start
        )
        return Completion(
            text=text,
            model=model,
            prompt_tokens=_prompt_tokens(first),
            completion_tokens=int(getattr(last, "output_tokens", 0) or 0),
            cached_prompt_tokens=int(getattr(first, "cache_read_input_tokens", None) or 0),
            latency_s=time.perf_counter() - start,
            finish_reason=_FINISH.get(stop or "end_turn", "stop"),
        )

    async def aclose(self) -> None:
        await self._client.close()


def _sdk_base_url(endpoint: str | None) -> str | None:
    """The SDK appends ``/v1/messages`` itself, so a ``.../v1`` URL loses its ``/v1``."""
    if endpoint is None:
        return None
    return endpoint[: -len("/v1")] if endpoint.endswith("/v1") else endpoint


def _prompt_tokens(usage: Any) -> int:
    """The whole prompt: fresh input plus cache reads and cache writes."""
    if usage is None:
        return 0
    parts = (
        usage.input_tokens,
        getattr(usage, "cache_read_input_tokens", None),
        getattr(usage, "cache_creation_input_tokens", None),
    )
    return sum(int(p or 0) for p in parts)
