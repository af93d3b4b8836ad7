"""Per-endpoint admission: a concurrency gate and requests/tokens-per-minute buckets.

Every call to an endpoint passes through its :class:`EndpointGate` before it is
sent: first a concurrency permit (fixed, or adaptive like Inspect AI's), then
one request from the RPM bucket and its estimated tokens from the TPM bucket,
then room in the buckets the provider's own headers describe
(:mod:`agentbus.llm.pacing`). The permit is taken first so that requests
waiting on a rate bucket do not also pile up as open connections. Token
estimates are settled against the real usage after the call, so the TPM
bucket tracks what the provider counts. The gate keeps the figures a run
summary shows: peak and current limit, 429s, and the time requests waited.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

import anyio
import structlog

from agentbus.llm.config import AdaptiveConcurrency, EndpointLimits
from agentbus.llm.pacing import INPUT, OUTPUT, TOKENS, HeaderPacer, Snapshot
from agentbus.llm.queueing import episode_clock
from agentbus.llm.types import ChatMessage

log = structlog.get_logger(__name__)


def estimate_prompt_tokens(messages: Sequence[ChatMessage]) -> int:
    """A cheap upper-ish estimate (4 characters a token, plus per-message overhead)."""
    return sum(len(m["content"]) // 4 + 4 for m in messages) + 2


class TokenBucket:
    """A token bucket refilled continuously at ``per_minute / 60`` per second.

    Its capacity is ``burst_s`` seconds of refill (at least one request's
    worth), so a run starts smoothly instead of spending a whole minute's
    budget in its first instant. A cost larger than the capacity is admitted
    once the bucket is full and leaves it in debt, so one large request can
    never wait forever. Waiters are served first come, first served.
    """

    def __init__(self, per_minute: float, *, burst_s: float = 1.0) -> None:
        if per_minute <= 0:
            raise ValueError("per_minute must be positive")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.level = self.capacity
        self._stamp = time.monotonic()
        self._lock = anyio.Lock()

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, cost: float = 1.0) -> None:
        """Wait until ``cost`` may be spent, then spend it."""
        async with self._lock:
            while True:
                self._refill()
                need = min(cost, self.capacity)
                if self.level >= need:
                    self.level -= cost
                    return
                await anyio.sleep((need - self.level) / self.rate)

    def settle(self, extra: float) -> None:
        """Charge ``extra`` more (or refund a negative amount) once the real cost is known."""
        self._refill()
        self.level = min(self.capacity, self.level - extra)


class ConcurrencyGate:
    """At most ``limit`` requests in flight; the limit may adapt to rate limiting.

    Permits are handed directly to the longest waiter on release, so the order
    of admission is first come, first served. With adaptive concurrency the
    limit starts low and grows while it is fully used (doubling per round in
    slow start, then by ``increase`` per round), is multiplied by ``decrease``
    on a 429, and admission pauses for a cooldown extended by Retry-After.
    """

    def __init__(
        self,
        max_concurrency: int,
        adaptive: AdaptiveConcurrency | None = None,
        *,
        adaptive_default: bool = False,
    ) -> None:
        self.max_concurrency = max_concurrency
        on = adaptive is not None and (
            adaptive.enabled if adaptive.enabled is not None else adaptive_default
        )
        self.adaptive = adaptive if on else None
        start = self.adaptive.start if self.adaptive else max_concurrency
        self.limit = float(min(start, max_concurrency))
        self.peak_limit = self.current_limit
        self.in_flight = 0
        #: permit holders not sending yet (waiting on a rate bucket): not the limit's doing
        self.held_elsewhere = 0
        self.peak = 0
        self.rate_limited = 0
        self._slow_start = True
        self._cooldown_until = 0.0
        self._last_decrease = -math.inf
        self._waiters: deque[anyio.Event] = deque()

    @property
    def current_limit(self) -> int:
        return max(1, int(self.limit))

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> None:
        if self.in_flight < self.current_limit and not self._waiters:
            self._take()
        else:
            ev = anyio.Event()
            self._waiters.append(ev)
            try:
                await ev.wait()
            except BaseException:
                if ev.is_set():  # a permit was handed over just as we were cancelled
                    self.release()
                else:
                    self._waiters.remove(ev)
                raise
        try:
            await self._wait_cooldown()
        except BaseException:
            self.release()
            raise

    def _take(self) -> None:
        self.in_flight += 1
        if self.in_flight > self.peak:
            self.peak = self.in_flight

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.current_limit:
            self._take()
            self._waiters.popleft().set()

    async def _wait_cooldown(self) -> None:
        # a deadline that may move later while we sleep, so re-check it after each nap
        while (delay := self._cooldown_until - time.monotonic()) > 0:  # noqa: ASYNC110
            await anyio.sleep(delay)

    def on_success(self) -> None:
        """Grow an adaptive limit when it is the bottleneck (called before release)."""
        a = self.adaptive
        if a is None or self.limit >= self.max_concurrency:
            return
        if self.in_flight - self.held_elsewhere < self.current_limit and not self._waiters:
            return  # the limit is not what holds requests back
        if self.held_elsewhere and self._waiters:
            return  # a rate bucket holds them back: more permits would only queue there
        step = a.increase if self._slow_start else a.increase / self.limit
        self.limit = min(float(self.max_concurrency), self.limit + step)
        self.peak_limit = max(self.peak_limit, self.current_limit)
        self._wake()

    def on_rate_limit(self, retry_after: float | None) -> None:
        """Back off after a 429: shrink an adaptive limit and pause admission."""
        self.rate_limited += 1
        a = self.adaptive
        if a is None:
            return
        now = time.monotonic()
        pause = max(a.cooldown_s, retry_after or 0.0)
        self._cooldown_until = max(self._cooldown_until, now + pause)
        # one burst of 429s from the same overload shrinks the limit once
        if now - self._last_decrease >= a.cooldown_s:
            self._last_decrease = now
            self._slow_start = False
            old = self.limit
            self.limit = max(float(a.min), self.limit * a.decrease)
            log.info("llm.concurrency_decreased", old=int(old), new=self.current_limit)


class EndpointGate:
    """Admission to one endpoint: a concurrency permit, RPM/TPM buckets, header pacing.

    ``pacer`` may be shared by the endpoints of several models: a provider's
    limits belong to the key, not to one model name.
    """

    def __init__(
        self,
        limits: EndpointLimits,
        *,
        pacer: HeaderPacer | None = None,
        adaptive_default: bool = False,
    ) -> None:
        self.concurrency = ConcurrencyGate(
            limits.max_concurrency, limits.adaptive, adaptive_default=adaptive_default
        )
        self.rpm = TokenBucket(limits.rpm) if limits.rpm else None
        self.tpm = TokenBucket(limits.tpm) if limits.tpm else None
        self.pacer = pacer if limits.pace_from_headers else None
        #: seconds requests spent between asking for a permit and being sent
        self.waited_s = 0.0

    @asynccontextmanager
    async def permit(self, estimated_tokens: int, *, max_tokens: int = 0) -> AsyncIterator[Permit]:
        """Admit one request whose prompt and ``max_tokens`` are ``estimated_tokens``."""
        started = time.monotonic()
        # the wait for admission is not the episode's own time (agentbus/llm/queueing.py)
        clock = episode_clock()
        if clock is not None:
            clock.enter()
        try:
            await self.concurrency.acquire()
        except BaseException:
            if clock is not None:
                clock.leave()
            raise
        try:
            sent: Snapshot = {}
            self.concurrency.held_elsewhere += 1
            try:
                if self.rpm is not None:
                    await self.rpm.acquire(1)
                if self.tpm is not None:
                    await self.tpm.acquire(estimated_tokens)
                if self.pacer is not None:
                    prompt = max(0, estimated_tokens - max_tokens)
                    sent = await self.pacer.acquire(HeaderPacer.costs(prompt, max_tokens))
            finally:
                self.concurrency.held_elsewhere -= 1
                if clock is not None:
                    clock.leave()
            self.waited_s += time.monotonic() - started
            yield Permit(self, estimated_tokens, max_tokens, sent)
        finally:
            self.concurrency.release()


class Permit:
    """One admitted request; report its real usage, headers and outcome through it."""

    __slots__ = ("_estimate", "_gate", "_max_tokens", "_sent")

    def __init__(self, gate: EndpointGate, estimate: int, max_tokens: int, sent: Snapshot) -> None:
        self._gate = gate
        self._estimate = estimate
        self._max_tokens = max_tokens
        self._sent = sent

    def headers(self, headers: Mapping[str, str]) -> None:
        """The response's headers (a 429's too): what the provider says is left."""
        if self._gate.pacer is not None:
            self._gate.pacer.observe(headers, self._sent)

    def succeeded(
        self, tokens: int, *, completion_tokens: int | None = None, cached_tokens: int = 0
    ) -> None:
        """Settle the estimates with the real usage (``tokens`` = prompt + completion)."""
        if self._gate.tpm is not None:
            self._gate.tpm.settle(tokens - self._estimate)
        pacer = self._gate.pacer
        if pacer is not None and completion_tokens is not None:
            prompt = tokens - completion_tokens
            pacer.settle(TOKENS, tokens - self._estimate)
            pacer.settle(INPUT, (prompt - cached_tokens) - (self._estimate - self._max_tokens))
            pacer.settle(OUTPUT, completion_tokens - self._max_tokens)
        self._gate.concurrency.on_success()

    def rate_limited(self, retry_after: float | None) -> None:
        self._gate.concurrency.on_rate_limit(retry_after)
