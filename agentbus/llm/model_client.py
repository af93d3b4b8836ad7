"""One model's pool of replicas and its retrying call: the router's per-model part.

:class:`Replica` is one endpoint of a model (its backend, its gate, its
health); :class:`ModelClient` picks the best replica for each attempt and
retries transient failures with backoff, raising one
:class:`~agentbus.core.errors.InfraError` when it gives up. The router
(:mod:`agentbus.llm.router`) builds these and puts the cache in front.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.abc
import structlog

from agentbus.core.errors import ContextOverflow, InfraError
from agentbus.llm.backends.base import Backend
from agentbus.llm.config import EndpointLimits
from agentbus.llm.limits import EndpointGate, estimate_prompt_tokens
from agentbus.llm.pacing import REQUESTS, TOKENS, HeaderPacer, headers_sink
from agentbus.llm.replicas import (
    Affinity,
    ReplicaState,
    choose,
    prefix_key,
)
from agentbus.llm.retry import UpstreamError, backoff_delay
from agentbus.llm.spec import ModelSpec
from agentbus.llm.stats import ModelStats
from agentbus.llm.tools import complete_with_tools
from agentbus.llm.types import ChatMessage, Completion, SamplingParams

log = structlog.get_logger(__name__)


class Replica:
    """One endpoint of a model: its backend, its gate and its health."""

    def __init__(
        self, backend: Backend, limits: EndpointLimits, pacer: HeaderPacer | None = None
    ) -> None:
        self.backend = backend
        self.gate = EndpointGate(
            limits, pacer=pacer, adaptive_default=type(backend).adaptive_default
        )
        self.limits = limits
        self.outstanding = 0
        self.failures_in_row = 0
        self.down_until = 0.0
        self.calls = 0
        self.errors = 0
        self.taken_out = 0
        #: health and server load (read by a HealthMonitor for vllm: replicas)
        self.state = ReplicaState()
        self.last_rate_limit = -math.inf
        self._calls = 0
        self._tokens = 0

    @property
    def label(self) -> str:
        return self.backend.label

    def succeeded(self) -> None:
        self.calls += 1
        self.failures_in_row = 0

    def failed(self, err: UpstreamError, replicas: int) -> None:
        self.calls += 1
        self.errors += 1
        if err.kind == "rate_limit":
            self.last_rate_limit = time.monotonic()
            return  # busy, not broken: the gate slows down instead
        self.failures_in_row += 1
        if replicas > 1 and self.failures_in_row >= self.limits.replica_failures:
            self.down_until = time.monotonic() + self.limits.replica_cooldown_s
            self.failures_in_row = 0
            self.taken_out += 1
            log.warning(
                "llm.replica_cooling_down",
                replica=self.label,
                seconds=self.limits.replica_cooldown_s,
            )

    def to_dict(self) -> dict[str, Any]:
        c = self.gate.concurrency
        out: dict[str, Any] = {
            "endpoint": self.label,
            "calls": self.calls,
            "errors": self.errors,
            "outstanding": self.outstanding,
            "peak_in_flight": c.peak,
            "concurrency_limit": c.current_limit,
            "peak_concurrency_limit": c.peak_limit,
            "adaptive": c.adaptive is not None,
            "rate_limited": c.rate_limited,
            "waited_s": round(self.gate.waited_s, 3),
            "taken_out": self.taken_out,
        }
        if self.state.url is not None:
            server = self.state.server
            out["health"] = {
                "healthy": self.state.healthy,
                "drained": self.state.drained,
                "running": None if server is None else server.running,
                "waiting": None if server is None else server.waiting,
                "kv_cache_usage": None if server is None else server.kv_usage,
            }
        if self.gate.pacer is not None and self.gate.pacer.buckets:
            out["pacing"] = self.gate.pacer.to_dict()
        return out

    def capacity(self, latency_s: float) -> int:
        """Requests this endpoint can usefully hold in flight now.

        The concurrency limit, or fewer when the provider's announced rate
        allows less: by Little's law, rate x latency requests are in flight
        at that rate (plus headroom for the latency's tail).
        """
        limit = self.gate.concurrency.current_limit
        pacer = self.gate.pacer
        if pacer is None or latency_s <= 0:
            return limit
        rates = [r for r in (pacer.rate_per_s(REQUESTS),) if r is not None]
        token_rate = pacer.rate_per_s(TOKENS)
        if token_rate is not None and self.tokens_per_call > 0:
            rates.append(token_rate / self.tokens_per_call)
        if not rates:
            return limit
        return max(1, min(limit, math.ceil(min(rates) * latency_s * 1.5) + 1))

    @property
    def tokens_per_call(self) -> float:
        return self._tokens / self._calls if self._calls else 0.0

    def used(self, tokens: int) -> None:
        self._calls += 1
        self._tokens += tokens

    def rate_limited_now(self, within_s: float = 2.0) -> bool:
        """Whether this endpoint held requests back for its rate limit lately."""
        pacer = self.gate.pacer
        now = time.monotonic()
        paced = pacer is not None and now - pacer.last_wait < within_s
        return paced or now - self.last_rate_limit < within_s


class ModelClient:
    """All replicas of one model, with retries; the cache sits in front of it."""

    def __init__(
        self, spec: ModelSpec, replicas: list[Replica], limits: EndpointLimits, stats: ModelStats
    ) -> None:
        if not replicas:
            raise ValueError("a model needs at least one replica")
        self.spec = spec
        self.replicas = replicas
        self.limits = limits
        self.stats = stats
        self.affinity = Affinity(limits.affinity_abs, limits.affinity_rel)
        self._next = 0

    def pick(self, prefix: str | None = None) -> Replica:
        """The replica for a request (load, health, prefix affinity; ties rotate)."""
        if len(self.replicas) == 1:
            return self.replicas[0]
        start = self._next
        self._next = (self._next + 1) % len(self.replicas)
        return self.replicas[choose(self.replicas, prefix, self.affinity, start)]

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        stats = self.stats
        stats.sent += 1
        estimate = estimate_prompt_tokens(messages) + params.max_tokens
        attempts = self.limits.max_retries + 1
        last: UpstreamError | None = None
        prefix = prefix_key(messages) if len(self.replicas) > 1 else None
        for attempt in range(attempts):
            replica = self.pick(prefix)
            failure: UpstreamError | None = None
            replica.outstanding += 1
            try:
                async with replica.gate.permit(estimate, max_tokens=params.max_tokens) as permit:
                    try:
                        with headers_sink(permit.headers):
                            result = await complete_with_tools(replica.backend, messages, params)
                    except UpstreamError as err:
                        if err.kind == "rate_limit":
                            permit.rate_limited(err.retry_after)
                        raise
                    used = result.prompt_tokens + result.completion_tokens
                    permit.succeeded(
                        used,
                        completion_tokens=result.completion_tokens,
                        cached_tokens=result.cached_prompt_tokens,
                    )
                    replica.used(used)
            except UpstreamError as err:
                failure = err
            finally:
                replica.outstanding -= 1  # a request in backoff loads no replica
            if failure is None:
                replica.succeeded()
                stats.record(result.prompt_tokens, result.completion_tokens, result.latency_s)
                if result.finish_reason == "length":
                    stats.truncated += 1
                return result
            if failure.kind == "context_overflow":
                # the server is fine and answered: the prompt is the agent's doing
                replica.succeeded()
                stats.context_overflows += 1
                raise ContextOverflow(str(failure)) from None
            last = failure
            replica.failed(failure, len(self.replicas))
            if failure.kind == "rate_limit":
                stats.rate_limited += 1
                if failure.status == 529:
                    stats.overloaded += 1
            if not failure.retryable or attempt + 1 == attempts:
                break
            stats.retries += 1
            delay = backoff_delay(
                attempt,
                base=self.limits.backoff_base,
                cap=self.limits.backoff_max,
                retry_after=failure.retry_after,
            )
            log.debug("llm.retry", endpoint=replica.label, error=str(failure), delay_s=delay)
            stats.backoff_s += delay
            await anyio.sleep(delay)
        stats.errors += 1
        assert last is not None
        if last.retryable:
            message = f"{last}; gave up after {attempts} attempts"
        else:
            message = f"{last}; not retried"
        log.warning("llm.call_failed", error=message)
        raise InfraError(message) from None
