"""The router: one client per model for the whole run, replicas, retries, shared calls.

``LLMRouter.client(spec)`` hands out an :class:`LLM` for a model spec. Behind
it, per model:

* one backend (one SDK client, one connection pool) per endpoint, created on
  first use and kept until :meth:`LLMRouter.aclose`;
* per endpoint an :class:`~agentbus.llm.limits.EndpointGate` (concurrency,
  RPM, TPM, adaptive limit);
* replicas balanced by least outstanding requests (queued at the gate or in
  flight); a replica that fails ``replica_failures`` times in a row sits out
  ``replica_cooldown_s`` while the others serve;
* retries of transient failures with full-jitter backoff honouring
  Retry-After, each attempt on the best replica at that moment, then one
  :class:`~agentbus.errors.InfraError` naming the endpoint;
* the shared completion cache with in-flight coalescing, where the cache
  policy allows (``auto``: deterministic sampling only).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import anyio
import structlog

from agentbus import registry
from agentbus.errors import InfraError, UserError
from agentbus.llm.backends.base import Backend, BackendContext
from agentbus.llm.cache import CompletionCache, cache_key
from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.limits import EndpointGate, estimate_prompt_tokens
from agentbus.llm.retry import UpstreamError, backoff_delay
from agentbus.llm.spec import ModelSpec, parse_spec
from agentbus.llm.stats import ModelStats, summary_line
from agentbus.llm.tools import complete_with_tools
from agentbus.llm.types import ChatMessage, Completion, SamplingParams

log = structlog.get_logger(__name__)


class Replica:
    """One endpoint of a model: its backend, its gate and its health."""

    def __init__(self, backend: Backend, limits: EndpointLimits) -> None:
        self.backend = backend
        self.gate = EndpointGate(limits)
        self.limits = limits
        self.outstanding = 0
        self.failures_in_row = 0
        self.down_until = 0.0
        self.calls = 0
        self.errors = 0
        self.taken_out = 0

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
        return {
            "endpoint": self.label,
            "calls": self.calls,
            "errors": self.errors,
            "outstanding": self.outstanding,
            "peak_in_flight": c.peak,
            "concurrency_limit": c.current_limit,
            "taken_out": self.taken_out,
        }


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
        self._next = 0

    def pick(self) -> Replica:
        """The healthy replica with the fewest outstanding requests (ties rotate)."""
        now = time.monotonic()
        n = len(self.replicas)
        start = self._next
        self._next = (self._next + 1) % n
        best: Replica | None = None
        for i in range(n):
            r = self.replicas[(start + i) % n]
            if r.down_until > now:
                continue
            if best is None or r.outstanding < best.outstanding:
                best = r
        if best is None:  # all cooling down: the one back soonest
            best = min(self.replicas, key=lambda r: r.down_until)
        return best

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        stats = self.stats
        stats.sent += 1
        estimate = estimate_prompt_tokens(messages) + params.max_tokens
        attempts = self.limits.max_retries + 1
        last: UpstreamError | None = None
        for attempt in range(attempts):
            replica = self.pick()
            failure: UpstreamError | None = None
            replica.outstanding += 1
            try:
                async with replica.gate.permit(estimate) as permit:
                    try:
                        result = await complete_with_tools(replica.backend, messages, params)
                    except UpstreamError as err:
                        if err.kind == "rate_limit":
                            permit.rate_limited(err.retry_after)
                        raise
                    permit.succeeded(result.prompt_tokens + result.completion_tokens)
            except UpstreamError as err:
                failure = err
            finally:
                replica.outstanding -= 1  # a request in backoff loads no replica
            if failure is None:
                replica.succeeded()
                stats.record(result.prompt_tokens, result.completion_tokens, result.latency_s)
                return result
            last = failure
            replica.failed(failure, len(self.replicas))
            if failure.kind == "rate_limit":
                stats.rate_limited += 1
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
            await anyio.sleep(delay)
        stats.errors += 1
        assert last is not None
        if last.retryable:
            message = f"{last}; gave up after {attempts} attempts"
        else:
            message = f"{last}; not retried"
        log.warning("llm.call_failed", error=message)
        raise InfraError(message) from None


def with_defaults(defaults: SamplingParams, params: SamplingParams) -> SamplingParams:
    """``params`` over the run's ``defaults``: the fields a caller set win, the rest follow the run.

    A module that only adds tools (``SamplingParams(tools=...)``) keeps the
    run's temperature, seed and token limit instead of the class defaults.
    """
    if not params.model_fields_set:
        return defaults
    return defaults.model_copy(update={f: getattr(params, f) for f in params.model_fields_set})


class RoutedLLM:
    """The handle modules get for one model: defaults, shared calls, accounting."""

    def __init__(
        self,
        client: ModelClient,
        cache: CompletionCache,
        config: LLMConfig,
        defaults: SamplingParams,
    ) -> None:
        self._client = client
        self._cache = cache
        self._policy = config.cache
        self._defaults = defaults
        self.spec = client.spec
        self.stats = client.stats

    def _cacheable(self, params: SamplingParams) -> bool:
        if self._policy == "off":
            return False
        return self._policy == "on" or params.deterministic

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        p = self._defaults if params is None else with_defaults(self._defaults, params)
        self.stats.requested += 1
        if not self._cacheable(p):
            return await self._client.complete(messages, p)
        key = cache_key(self.spec.backend, self.spec.model, messages, p)
        result, source = await self._cache.get_or_call(
            key, lambda: self._client.complete(messages, p)
        )
        if source == "hit":
            self.stats.cache_hits += 1
        elif source == "coalesced":
            self.stats.coalesced += 1
        return result

    def __repr__(self) -> str:
        return f"<RoutedLLM {self.spec.key}>"


class LLMRouter:
    """Every model of a run behind one object; use as ``async with LLMRouter(...)``.

    ``sim`` is the running simulator (``agentbus.sim.service.SimHandle``),
    needed by ``sim:`` specs only.
    """

    def __init__(self, config: LLMConfig | None = None, *, sim: Any = None) -> None:
        self.config = config if config is not None else LLMConfig()
        self.context = BackendContext(
            sim=sim, sim_transport=self.config.sim_transport, http_client=self.config.http_client
        )
        self.cache = CompletionCache(self.config.cache_dir)
        self._defaults = self.config.sampling.params()
        self._clients: dict[str, RoutedLLM] = {}
        self._closed = False

    def client(self, spec: str | ModelSpec) -> RoutedLLM:
        """The client of ``spec``, created once per run (one pool per endpoint)."""
        if self._closed:
            raise RuntimeError("LLMRouter is closed")
        parsed = spec if isinstance(spec, ModelSpec) else parse_spec(spec)
        existing = self._clients.get(parsed.key)
        if existing is not None:
            return existing
        backend_cls = registry.get("backends", parsed.backend)
        if not (isinstance(backend_cls, type) and issubclass(backend_cls, Backend)):
            raise UserError(
                f"backend {parsed.backend!r} is not an agentbus.llm.backends.Backend subclass"
            )
        limits = self.config.limits_for(parsed.key)
        # building a backend opens no connection yet, so a failure here leaks nothing
        replicas = [
            Replica(backend_cls(parsed, endpoint, limits, self.context), limits)
            for endpoint in backend_cls.endpoints(parsed, self.context)
        ]
        client = RoutedLLM(
            ModelClient(parsed, replicas, limits, ModelStats()),
            self.cache,
            self.config,
            self._defaults,
        )
        self._clients[parsed.key] = client
        log.debug("llm.client_created", model=parsed.key, replicas=len(replicas))
        return client

    def models(self) -> list[str]:
        return list(self._clients)

    def total(self) -> ModelStats:
        total = ModelStats()
        for c in self._clients.values():
            total.add(c.stats)
        return total

    def stats(self) -> dict[str, Any]:
        """Counters per model (with per-replica detail) and in total."""
        models: dict[str, Any] = {}
        for key, c in self._clients.items():
            entry = c.stats.to_dict()
            entry["replicas"] = [r.to_dict() for r in c._client.replicas]
            models[key] = entry
        return {
            "models": models,
            "total": self.total().to_dict(),
            "cache": {"entries": len(self.cache), "loaded_from_disk": self.cache.loaded},
        }

    def summary(self) -> str:
        """One line for the run summary: calls requested vs sent."""
        return summary_line(self.total())

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            with anyio.CancelScope(shield=True):
                for c in self._clients.values():
                    for r in c._client.replicas:
                        await r.backend.aclose()
        finally:
            self.cache.close()

    async def __aenter__(self) -> LLMRouter:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
