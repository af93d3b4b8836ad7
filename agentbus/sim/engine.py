"""The one request core shared by the HTTP server and the in-process transport.

``SimEngine.run`` takes a parsed request, draws its fault, asks the model for
the answer, holds a batch seat for the serving time and hands the text out,
either at once or in timed bursts through ``emit`` (streaming). The protocol
layers (OpenAI chat and completions, Anthropic messages, in-process) only
parse and format; they never decide anything, so every route behaves alike.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import structlog

from agentbus.core.errors import UserError
from agentbus.llm.tools import split_tool_calls
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.behaviours import misbehave, overflow, too_long
from agentbus.sim.faults import (
    Behaviour,
    Fault,
    FaultInjector,
    SimConnectionDropped,
    SimFault,
    SimOverloaded,
    SimRateLimited,
    SimServerError,
)
from agentbus.sim.model import SimAnswer, SimModel, count_tokens, prompt_tokens
from agentbus.sim.ratelimit import ProviderLimiter, RateLimited, Ticket
from agentbus.sim.serving import ServingModel

log = structlog.get_logger("agentbus.sim")

#: streaming answers are released in at most this many timed bursts
MAX_BURSTS = 8

#: receives the stream deltas of one timed burst (one SSE event each)
Emit = Callable[[Sequence[str]], Awaitable[None]]


@dataclass(frozen=True)
class SimRequest:
    """A request, protocol-neutral: model (profile) name, chat, sampling."""

    model: str
    messages: Sequence[ChatMessage]
    params: SamplingParams
    #: the API key that sent it (provider limits are per key)
    key: str = ""
    #: whose headers and errors it gets: ``openai`` or ``anthropic`` (529 overloaded)
    style: str = "openai"


@dataclass
class SimMetrics:
    """Counters for /metrics: what arrived, how it ended, what is in flight now."""

    received: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    in_flight: int = 0
    max_in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_model: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests_received": self.received,
            "requests_by_status": dict(self.by_status),
            "requests_served": self.by_status.get("200", 0),
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "requests_by_model": dict(self.by_model),
            "uptime_s": round(time.monotonic() - self.started, 3),
        }


def split_pieces(text: str) -> list[str]:
    """Word-sized stream deltas (whitespace kept with the word before it)."""
    pieces: list[str] = []
    start = 0
    for i, ch in enumerate(text):
        if ch.isspace() and i + 1 < len(text) and not text[i + 1].isspace():
            pieces.append(text[start : i + 1])
            start = i + 1
    if start < len(text):
        pieces.append(text[start:])
    return pieces


class SimEngine:
    """Model + serving + faults + metrics: everything a request goes through."""

    def __init__(
        self,
        model: SimModel,
        serving: ServingModel | None = None,
        faults: FaultInjector | None = None,
        limiter: ProviderLimiter | None = None,
    ) -> None:
        self.model = model
        self.serving = serving or ServingModel()
        self.faults = faults or FaultInjector()
        self.limiter = limiter
        self.metrics = SimMetrics()

    def snapshot(self) -> dict[str, Any]:
        """Everything /metrics shows."""
        return {
            **self.metrics.to_json(),
            **self.serving.stats(),
            "faults_injected": {k: v for k, v in self.faults.counts.items() if k != "none"},
            **({"provider_limits": self.limiter.stats()} if self.limiter is not None else {}),
        }

    async def run(
        self, request: SimRequest, emit: Emit | None = None, meta: dict[str, Any] | None = None
    ) -> SimAnswer:
        """Serve one request; raise :class:`SimFault` or :class:`UserError` on failure.

        With ``emit`` the text goes out in word-sized deltas, handed over in up
        to :data:`MAX_BURSTS` timed bursts after the time to first token (one
        sleep and one write per burst, never per token); the returned answer
        always carries the whole text and usage. ``meta``, when given, receives
        ``headers`` (a provider's rate-limit headers) and ``cached_tokens``.
        """
        m = self.metrics
        m.received += 1
        m.in_flight += 1
        m.max_in_flight = max(m.max_in_flight, m.in_flight)
        status = "200"
        try:
            answer = await self._run(request, emit, {} if meta is None else meta)
            m.prompt_tokens += answer.prompt_tokens
            m.completion_tokens += answer.completion_tokens
            m.by_model[answer.profile] += 1
            return answer
        except SimFault as exc:
            status = exc.label
            raise
        except UserError:
            status = "404"
            raise
        except ConnectionResetError:  # the client went away while we streamed
            status = "disconnected"
            raise
        except Exception:  # a bug in an expert or the model: the server answers 500
            status = "error"
            log.exception("sim.request_failed", model=request.model)
            raise
        except BaseException:
            status = "cancelled"
            raise
        finally:
            m.in_flight -= 1
            m.by_status[status] += 1

    async def _run(self, request: SimRequest, emit: Emit | None, meta: dict[str, Any]) -> SimAnswer:
        stand_in = self.faults.config.any_model
        if stand_in is not None and request.model not in self.model.profiles.names():
            request = replace(request, model=stand_in)  # a server that answers any name
        self.model.profile(request.model)  # unknown model: fail before anything else
        fault = self.faults.draw()
        if fault is Fault.RATE_LIMIT:
            retry = self.faults.config.retry_after_s
            raise SimRateLimited("rate limit reached (simulated)", retry_after=retry)
        if fault is Fault.SERVER_ERROR:
            raise SimServerError("internal server error (simulated)")
        behaviour = self.faults.behaviour()
        config = self.faults.config
        if behaviour is Behaviour.CONTEXT_OVERFLOW or too_long(
            config, request.messages, request.params
        ):
            self.faults.counts[Behaviour.CONTEXT_OVERFLOW.value] += 1
            raise overflow(config, request.messages, request.params, request.style)
        ticket = self._admit(request, meta) if self.limiter is not None else None
        answer = self.model.generate(request.model, request.messages, request.params)
        mangled = self.faults.malform(answer.text)
        if mangled is not None:
            answer = _with_text(answer, mangled)
        if behaviour is not Behaviour.NONE:
            spoilt = misbehave(
                behaviour, answer, request.messages, request.params, self.faults.rng()
            )
            if spoilt is not answer:
                self.faults.counts[behaviour.value] += 1
                answer = spoilt
        if request.params.tools:  # vLLM's tool-call parser: calls out of the text
            text, calls = split_tool_calls(answer.text)
            if calls:
                answer = replace(
                    answer, text=text, tool_calls=tuple(calls), finish_reason="tool_calls"
                )
        prompt_text = "".join(f"{m['role']}\x00{m['content']}\x00" for m in request.messages)
        if fault is Fault.STALL:  # slow on the way in (a gateway, a network): no GPU held
            await self.serving.sleep(self.faults.config.stall_s)
        if ticket is not None:
            if self.limiter is not None and self.limiter.provider_latency:
                try:  # the providers adjust the output-token estimate when the request ends
                    return await self._provider_answer(answer, emit, fault)
                finally:
                    ticket.settle(answer.completion_tokens)
            ticket.settle(answer.completion_tokens)
        async with self.serving.seat(prompt_text, answer.prompt_tokens) as seat:
            meta.setdefault("cached_tokens", seat.cached_tokens)
            if emit is None:
                await self.serving.sleep(seat.duration(answer.completion_tokens))
                if fault is Fault.DROP:
                    raise SimConnectionDropped("connection dropped (simulated)")
                return answer
            await self.serving.sleep(seat.ttft_s)
            pieces = split_pieces(answer.text)
            bursts = min(MAX_BURSTS, max(1, len(pieces)))
            per_burst = -(-len(pieces) // bursts) if pieces else 0
            for b in range(bursts):
                chunk = pieces[b * per_burst : (b + 1) * per_burst]
                if fault is Fault.DROP and b >= bursts // 2:
                    raise SimConnectionDropped("connection dropped mid-stream (simulated)")
                tokens = count_tokens("".join(chunk))
                await self.serving.sleep(tokens * seat.tpot_s)
                if chunk:
                    await emit(chunk)
            if fault is Fault.DROP:
                raise SimConnectionDropped("connection dropped mid-stream (simulated)")
            return answer

    def _admit(self, request: SimRequest, meta: dict[str, Any]) -> Ticket:
        """Provider limits: 529 when overloaded (Messages only), else a bucket charge or 429."""
        limiter = self.limiter
        assert limiter is not None
        if request.style == "anthropic" and limiter.overload(self.metrics.in_flight - 1):
            raise SimOverloaded("Overloaded (simulated)")
        tokens = prompt_tokens(request.messages)
        cached = 0
        if limiter.provider_latency:  # no batch seat: read the prefix cache here
            text = "".join(f"{m['role']}\x00{m['content']}\x00" for m in request.messages)
            cached = self.serving.prefix_hit(text, tokens)
            meta["cached_tokens"] = cached
        try:
            ticket = limiter.admit(
                request.key,
                request.model,
                input_tokens=tokens,
                cached_tokens=cached,
                max_tokens=request.params.max_tokens,
                style=request.style,
            )
        except RateLimited as exc:
            raise SimRateLimited(
                str(exc), retry_after=exc.retry_after, headers=exc.headers
            ) from None
        meta["headers"] = ticket.headers
        return ticket

    async def _provider_answer(
        self, answer: SimAnswer, emit: Emit | None, fault: Fault
    ) -> SimAnswer:
        """A hosted API's timing: a heavy-tailed wait, then the decode time; no batch seat."""
        assert self.limiter is not None
        ttft, decode = self.limiter.latency(answer.completion_tokens)
        await self.serving.sleep(ttft)
        if emit is not None and answer.text:
            await self.serving.sleep(decode / 2)
            if fault is Fault.DROP:
                raise SimConnectionDropped("connection dropped mid-stream (simulated)")
            await emit(split_pieces(answer.text))
            await self.serving.sleep(decode / 2)
        else:
            await self.serving.sleep(decode)
        if fault is Fault.DROP:
            raise SimConnectionDropped("connection dropped (simulated)")
        return answer


def _with_text(answer: SimAnswer, text: str) -> SimAnswer:
    return replace(answer, text=text, completion_tokens=max(1, count_tokens(text)))
