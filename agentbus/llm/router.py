"""The router: one client per model for the whole run, replicas, retries, shared calls.

``LLMRouter.client(spec)`` hands out an :class:`LLM` for a model spec. Behind
it, per model:

* one backend (one SDK client, one connection pool) per endpoint, created on
  first use and kept until :meth:`LLMRouter.aclose`;
* per endpoint an :class:`~agentbus.llm.limits.EndpointGate` (concurrency,
  RPM, TPM, adaptive limit, pacing from the provider's rate-limit headers,
  one :class:`~agentbus.llm.pacing.HeaderPacer` per provider endpoint and
  shared by its models, since a key's limits cover all of them);
* replicas balanced by load with prefix affinity (:mod:`agentbus.llm.replicas`:
  outstanding requests, and for ``vllm:`` replicas the servers' own running
  and waiting counts and KV-cache usage from /metrics, /health to drain a
  replica that fails it); a replica that fails ``replica_failures`` times in
  a row sits out ``replica_cooldown_s`` while the others serve;
* retries of transient failures with full-jitter backoff honouring
  Retry-After, each attempt on the best replica at that moment, then one
  :class:`~agentbus.core.errors.InfraError` naming the endpoint;
* the shared completion cache with in-flight coalescing, where the cache
  policy allows (``auto``: deterministic sampling only).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import structlog

from agentbus.core import registry
from agentbus.core.errors import ContextOverflow, UserError
from agentbus.llm.backends.base import Backend, BackendContext
from agentbus.llm.cache import CompletionCache, cache_key
from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.model_client import ModelClient, Replica
from agentbus.llm.pacing import HeaderPacer
from agentbus.llm.replicas import (
    HealthMonitor,
    root_url,
)
from agentbus.llm.retry import cut_at_context_limit
from agentbus.llm.spec import ModelSpec, parse_spec
from agentbus.llm.stats import ModelStats, summary_line
from agentbus.llm.types import ChatMessage, Completion, SamplingParams

log = structlog.get_logger(__name__)


def with_defaults(
    defaults: SamplingParams, params: SamplingParams, cap: int | None = None
) -> SamplingParams:
    """``params`` over the run's ``defaults``: the fields a caller set win, the rest follow the run.

    A module that only adds tools (``SamplingParams(tools=...)``) keeps the
    run's temperature, seed and token limit instead of the class defaults.
    ``cap`` (the model's own ``max_tokens`` from the config) bounds a token
    limit the module asked for.
    """
    if not params.model_fields_set:
        return defaults
    merged = defaults.model_copy(update={f: getattr(params, f) for f in params.model_fields_set})
    if cap is not None and merged.max_tokens > cap:
        merged = merged.model_copy(update={"max_tokens": cap})
    return merged


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
        #: the model's own output cap (``[llm.models."SPEC"] max_tokens``), if set
        self._cap = client.limits.max_tokens
        if self._cap is not None:
            defaults = defaults.model_copy(update={"max_tokens": self._cap})
        self._defaults = defaults
        #: merged params by the caller's set fields and values (see :meth:`_params`)
        self._merged: dict[tuple[tuple[str, Any], ...], SamplingParams] = {}
        self.spec = client.spec
        self.stats = client.stats

    def _params(self, params: SamplingParams) -> SamplingParams:
        """:func:`with_defaults` for ``params``, remembered by the values the caller set.

        A module asks with the same few settings every call (PRAF's
        ``SamplingParams(stop=...)``); merging them anew cost a pydantic copy
        per call. Params are frozen, so the merged object is shared; settings
        that cannot be a key (tools, ``extra``: dicts) are merged every time.
        """
        fields = params.model_fields_set
        if not fields:
            return self._defaults
        key = tuple(sorted((f, getattr(params, f)) for f in fields))
        try:
            found = self._merged.get(key)
        except TypeError:  # an unhashable value
            return with_defaults(self._defaults, params, self._cap)
        if found is None:
            if len(self._merged) >= 256:
                self._merged.clear()
            found = self._merged[key] = with_defaults(self._defaults, params, self._cap)
        return found

    def _cacheable(self, params: SamplingParams) -> bool:
        if self._policy == "off":
            return False
        return self._policy == "on" or params.deterministic

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        p = self._defaults if params is None else self._params(params)
        self.stats.requested += 1
        if not self._cacheable(p):
            answer = await self._client.complete(messages, p)
            self._cache.note(answer)  # not kept for answering, but on the bill
            return self._within_window(answer, p)
        key = cache_key(self.spec.backend, self.spec.model, messages, p)
        result, source = await self._cache.get_or_call(
            key, lambda: self._client.complete(messages, p)
        )
        if source == "hit":
            self.stats.cache_hits += 1
        elif source == "coalesced":
            self.stats.coalesced += 1
        return self._within_window(result, p)

    def _within_window(self, result: Completion, params: SamplingParams) -> Completion:
        """``result``, or the overflow it is: an answer the context window cut short.

        Checked after the cache, which keeps the answer: the call was made (and
        paid), and a resumed run reads the same overflow back instead of
        sending the call again.
        """
        if cut_at_context_limit(result.finish_reason, result.completion_tokens, params.max_tokens):
            self.stats.context_overflows += 1
            raise ContextOverflow(
                f"{self.spec.key}: the answer ran into the end of the context window after "
                f"{result.completion_tokens} of {params.max_tokens} output tokens "
                f"({result.prompt_tokens} prompt tokens; finish_reason length)"
            )
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
        #: one header pacer per provider endpoint (backend, URL), shared by its models
        self._pacers: dict[tuple[str, str | None], HeaderPacer] = {}
        self._closed = False
        #: runs the replicas' health monitors while the router is entered
        self._monitors: anyio.abc.TaskGroup | None = None

    def _pacer(self, backend: str, endpoint: str | None, limits: EndpointLimits) -> HeaderPacer:
        key = (backend, endpoint)
        pacer = self._pacers.get(key)
        if pacer is None:
            pacer = self._pacers[key] = HeaderPacer(limits.pace_safety)
        return pacer

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
                f"backend {parsed.backend!r} is not an agentbus.llm.backends.base.Backend subclass"
            )
        limits = self.config.limits_for(parsed.key)
        # building a backend opens no connection yet, so a failure here leaks nothing
        replicas = [
            Replica(
                backend_cls(parsed, endpoint, limits, self.context),
                limits,
                self._pacer(parsed.backend, endpoint, limits),
            )
            for endpoint in backend_cls.endpoints(parsed, self.context)
        ]
        client = RoutedLLM(
            ModelClient(parsed, replicas, limits, ModelStats()),
            self.cache,
            self.config,
            self._defaults,
        )
        self._clients[parsed.key] = client
        self._monitor(parsed, replicas, limits)
        log.debug("llm.client_created", model=parsed.key, replicas=len(replicas))
        return client

    def _monitor(self, spec: ModelSpec, replicas: list[Replica], limits: EndpointLimits) -> None:
        """Watch /health and /metrics of a vllm: model with several replicas."""
        if spec.backend != "vllm" or len(replicas) < 2 or limits.health_interval_s <= 0:
            return
        for r in replicas:
            if r.backend.endpoint:
                r.state.url = root_url(r.backend.endpoint)
        if self._monitors is not None:
            monitor = HealthMonitor(replicas, interval_s=limits.health_interval_s)
            self._monitors.start_soon(monitor.run)

    def models(self) -> list[str]:
        return list(self._clients)

    def total(self) -> ModelStats:
        total = ModelStats()
        for c in self._clients.values():
            total.add(c.stats)
        return total

    def served_split(self) -> tuple[int, int]:
        """Prompt and output tokens the model servers have served so far (as below)."""
        clients = self._clients.values()
        return (
            sum(c.stats.prompt_tokens for c in clients),
            sum(c.stats.completion_tokens for c in clients),
        )

    def served_tokens(self) -> int:
        """Tokens the model servers have served so far (cache hits and coalesced calls not)."""
        return sum(
            c.stats.prompt_tokens + c.stats.completion_tokens for c in self._clients.values()
        )

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
        """The run summary: calls requested vs sent, then rate limits where any showed."""
        lines = [summary_line(self.total())]
        for c in self._clients.values():
            for r in c._client.replicas:
                gate, conc = r.gate, r.gate.concurrency
                paced = gate.pacer is not None and bool(gate.pacer.buckets)
                if conc.adaptive is None and not conc.rate_limited and not paced:
                    continue
                limit = (
                    f"limit peak {conc.peak_limit}, final {conc.current_limit}"
                    if conc.adaptive is not None
                    else f"limit {conc.current_limit} (fixed)"
                )
                lines.append(
                    f"rate limits {r.label}: {limit}, {conc.rate_limited} rate-limited answers"
                    f" (429/529), {gate.waited_s:.1f} request-seconds waited before sending,"
                    f" {c.stats.backoff_s:.1f} s in retry backoff"
                )
        return "\n".join(lines)

    def capacity(self) -> int | None:
        """LLM calls the models can usefully take at once now (None: nothing rate-limited).

        None when no endpoint is adaptive or paced by headers: a local server
        (``vllm:``, ``sim:``) batches whatever it is sent, and its queue is the
        place for the waiting work.

        The sum over endpoints of each one's current limit, lowered to what its
        announced rate allows (see :meth:`Replica.capacity`). The runtime sizes
        the episodes in flight from it, so a throttled provider slows the run
        down instead of leaving thousands of episodes waiting into timeouts.
        """
        total, bounded = 0, False
        for c in self._clients.values():
            mean = c.stats.latency_s_total / c.stats.succeeded if c.stats.succeeded else 0.0
            for r in c._client.replicas:
                total += r.capacity(mean)
                pacer = r.gate.pacer
                bounded |= r.gate.concurrency.adaptive is not None or bool(pacer and pacer.buckets)
        return total if bounded else None

    def rate_limit_note(self) -> str | None:
        """``rate-limited: ENDPOINT, ...`` while some endpoint holds requests back, else None."""
        names = self.rate_limited()
        return f"rate-limited: {', '.join(names)}" if names else None

    def rate_limited(self) -> list[str]:
        """Endpoints that held requests back for their rate limit in the last seconds."""
        return [
            r.label
            for c in self._clients.values()
            for r in c._client.replicas
            if r.rate_limited_now()
        ]

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
        self._monitors = anyio.create_task_group()
        await self._monitors.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        monitors, self._monitors = self._monitors, None
        try:
            if monitors is not None:
                monitors.cancel_scope.cancel()
                await monitors.__aexit__(None, None, None)
        finally:
            await self.aclose()
