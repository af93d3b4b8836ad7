"""Runs many episodes concurrently on one event loop.

Structured concurrency throughout: every episode runs in the runtime's task
group, so cancelling the run (Ctrl-C, a timeout around ``run``) cancels every
episode and leaves no task behind. A capacity limiter bounds the episodes in
flight; the spec source is pulled lazily, only when a permit frees, so an
adaptive scheduler can decide what to run next from the latest results, and a
run of a million specs never materialises them all at once.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable

import anyio

from agentbus.core.episode import Episode, EpisodeSpec
from agentbus.core.events import EPISODE_ENDED, EPISODE_STARTED, EventHub
from agentbus.core.outcome import Outcome
from agentbus.core.record import EpisodeRecord
from agentbus.executors.gcpolicy import steady_gc
from agentbus.llm.prices import PriceTable

#: called with each episode's spec and its record, once the record is published
OutcomeCallback = Callable[[EpisodeSpec, EpisodeRecord], Awaitable[None]]


class Runtime:
    """Concurrent episode runner with a limit, events and outcome callbacks."""

    def __init__(
        self,
        *,
        max_concurrency: int = 1000,
        hub: EventHub | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.max_concurrency = max_concurrency
        #: prices each record's per-slot tokens (None: tokens only)
        self.prices = prices
        self.hub = hub if hub is not None else EventHub()
        self.in_flight = 0
        self.finished = 0
        self.errors = 0
        #: LLM calls the endpoints can take at once now (None: no bound); see run()
        self.capacity: Callable[[], int | None] | None = None
        #: episodes admitted per call the endpoints can take (the rest think or wait briefly)
        self.episodes_per_call = 2.0
        self.min_episodes = 4

    async def run(
        self,
        specs: Iterable[EpisodeSpec] | AsyncIterable[EpisodeSpec],
        on_outcome: OutcomeCallback | None = None,
    ) -> int:
        """Run every spec; call ``on_outcome`` for each as it finishes. Returns the count."""
        limiter = anyio.CapacityLimiter(self.max_concurrency)
        # full collections would walk every in-flight episode: kept rare (gcpolicy.py)
        with steady_gc():
            return await self._run_all(specs, on_outcome, limiter)

    async def _run_all(
        self,
        specs: Iterable[EpisodeSpec] | AsyncIterable[EpisodeSpec],
        on_outcome: OutcomeCallback | None,
        limiter: anyio.CapacityLimiter,
    ) -> int:
        count = 0
        async with anyio.create_task_group() as tg:
            following = anyio.CancelScope()
            if self.capacity is not None:
                self._apply_capacity(limiter)
                tg.start_soon(self._follow_capacity, limiter, following)
            try:
                async for spec, token in _aiter(specs, limiter):
                    count += 1
                    tg.start_soon(self._run_one, spec, limiter, token, on_outcome)
            finally:
                following.cancel()
        return count

    async def _follow_capacity(
        self, limiter: anyio.CapacityLimiter, scope: anyio.CancelScope
    ) -> None:
        """Keep the episodes in flight in step with what the LLM endpoints can serve.

        Against a rate-limited provider, admitting ``max_concurrency`` episodes
        at once only queues them in front of the limit until their timeouts
        run out. Admitting about ``episodes_per_call`` episodes per call the
        endpoints can take now (their adaptive limits, their announced rates)
        keeps every endpoint busy while a tight limit slows the run instead.
        Lowering the limit never stops a running episode; it only holds back
        new ones.
        """
        with scope:
            while True:
                await anyio.sleep(0.25)
                self._apply_capacity(limiter)

    def _apply_capacity(self, limiter: anyio.CapacityLimiter) -> None:
        calls = self.capacity() if self.capacity is not None else None
        if calls is not None:
            wanted = math.ceil(calls * self.episodes_per_call)
            limiter.total_tokens = max(self.min_episodes, min(self.max_concurrency, wanted))

    async def run_one(self, spec: EpisodeSpec) -> Outcome:
        """Run a single episode (with events) and return its outcome."""
        return (await self.run_record(spec)).outcome

    async def run_record(self, spec: EpisodeSpec) -> EpisodeRecord:
        """Run a single episode (with events) and return its record."""
        await self._emit_started(spec)
        outcome = await self.episode_outcome(spec)
        record = EpisodeRecord.build(spec, outcome, self.prices)
        if self.hub.wants(EPISODE_ENDED):
            await self.hub.publish(EPISODE_ENDED, record.payload())
        return record

    async def episode_outcome(self, spec: EpisodeSpec) -> Outcome:
        """Where the episode runs: here; a distributed runtime sends it to a worker."""
        return await Episode(spec).run()

    async def _run_one(
        self,
        spec: EpisodeSpec,
        limiter: anyio.CapacityLimiter,
        token: object,
        on_outcome: OutcomeCallback | None,
    ) -> None:
        self.in_flight += 1
        try:
            record = await self.run_record(spec)
            if not record.counts:
                self.errors += 1
            self.finished += 1
            if on_outcome is not None:
                await on_outcome(spec, record)
        finally:
            self.in_flight -= 1
            limiter.release_on_behalf_of(token)

    async def _emit_started(self, spec: EpisodeSpec) -> None:
        if self.hub.wants(EPISODE_STARTED):
            await self.hub.publish(
                EPISODE_STARTED,
                {
                    "episode_id": spec.episode_id,
                    "task_id": spec.task.id,
                    "attempt": spec.attempt,
                    **spec.metadata,
                },
            )


async def _aiter(
    specs: Iterable[EpisodeSpec] | AsyncIterable[EpisodeSpec], limiter: anyio.CapacityLimiter
) -> AsyncIterator[tuple[EpisodeSpec, object]]:
    """Yield specs one at a time, each only once a concurrency permit is held for it.

    The permit is acquired *before* the next spec is pulled, so an adaptive
    source decides what to run with the freshest outcomes in hand.
    """
    if isinstance(specs, AsyncIterable):
        iterator = specs.__aiter__()
        while True:
            token = object()
            await limiter.acquire_on_behalf_of(token)
            try:
                spec = await iterator.__anext__()
            except StopAsyncIteration:
                limiter.release_on_behalf_of(token)
                return
            yield spec, token
    else:
        for spec in specs:
            token = object()
            await limiter.acquire_on_behalf_of(token)
            yield spec, token
