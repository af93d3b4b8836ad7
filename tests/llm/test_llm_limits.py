"""Admission and backoff: token buckets, the concurrency gate, adaptive limits, retry delays."""

from __future__ import annotations

import time

import anyio
import anyio.lowlevel
import pytest

from agentbus.llm.config import AdaptiveConcurrency, EndpointLimits
from agentbus.llm.limits import ConcurrencyGate, EndpointGate, TokenBucket
from agentbus.llm.retry import UpstreamError, backoff_delay, kind_for_status, parse_retry_after


async def test_token_bucket_paces_requests() -> None:
    bucket = TokenBucket(per_minute=2400)  # 40/s, burst of 40
    start = time.monotonic()
    for _ in range(60):
        await bucket.acquire(1)
    elapsed = time.monotonic() - start
    # 40 from the burst, 20 more at 40/s
    assert 0.45 <= elapsed < 2.0


async def test_token_bucket_admits_a_cost_above_capacity_and_goes_into_debt() -> None:
    bucket = TokenBucket(per_minute=600)  # capacity 10
    await bucket.acquire(50)  # a full bucket admits it
    assert bucket.level < 0
    start = time.monotonic()
    bucket.settle(-45)  # the real cost was lower: most of it comes back
    await bucket.acquire(1)
    assert time.monotonic() - start < 0.3


async def test_gate_never_exceeds_limit_and_serves_in_order() -> None:
    gate = ConcurrencyGate(3)
    peak = 0
    order: list[int] = []

    async def worker(i: int) -> None:
        nonlocal peak
        await gate.acquire()
        try:
            order.append(i)
            peak = max(peak, gate.in_flight)
            await anyio.sleep(0.01)
        finally:
            gate.release()

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(worker, i)
            await anyio.lowlevel.checkpoint()  # fix the arrival order
    assert peak == 3 == gate.peak
    assert order == list(range(20))
    assert gate.in_flight == 0 and gate.waiting == 0


async def test_gate_cancelled_waiter_frees_its_place() -> None:
    gate = ConcurrencyGate(1)
    await gate.acquire()
    with anyio.move_on_after(0.05):
        await gate.acquire()  # waits, then is cancelled
    assert gate.waiting == 0
    gate.release()
    with anyio.fail_after(1):
        await gate.acquire()
    gate.release()
    assert gate.in_flight == 0


async def test_adaptive_limit_grows_when_used_and_halves_on_429() -> None:
    gate = ConcurrencyGate(
        16, AdaptiveConcurrency(enabled=True, start=2, min=1, decrease=0.5, cooldown_s=0.1)
    )
    assert gate.current_limit == 2
    # successes while requests queue at the limit grow it, up to max_concurrency

    async def worker() -> None:
        for _ in range(4):
            await gate.acquire()
            await anyio.sleep(0.002)
            gate.on_success()
            gate.release()

    async with anyio.create_task_group() as tg:
        for _ in range(40):
            tg.start_soon(worker)
    assert gate.current_limit == 16
    assert gate.peak > 2
    before = gate.current_limit
    gate.on_rate_limit(retry_after=0.2)
    gate.on_rate_limit(retry_after=0.2)  # same burst: shrinks once
    assert gate.current_limit == max(1, int(before * 0.5))
    # admission pauses for the Retry-After
    start = time.monotonic()
    await gate.acquire()
    assert time.monotonic() - start >= 0.15
    gate.release()
    # an unsaturated success does not grow the limit
    limit = gate.limit
    await gate.acquire()
    gate.on_success()
    gate.release()
    assert gate.limit == limit


async def test_endpoint_gate_combines_concurrency_and_rpm() -> None:
    gate = EndpointGate(EndpointLimits(max_concurrency=2, rpm=6000))
    async with gate.permit(10) as permit:
        permit.succeeded(10)
        assert gate.concurrency.in_flight == 1
    assert gate.concurrency.in_flight == 0


def test_backoff_is_full_jitter_and_capped() -> None:
    assert backoff_delay(0, base=0.5, cap=30, rand=lambda: 1.0) == 0.5
    assert backoff_delay(3, base=0.5, cap=30, rand=lambda: 1.0) == 4.0
    assert backoff_delay(10, base=0.5, cap=30, rand=lambda: 1.0) == 30.0
    assert backoff_delay(10, base=0.5, cap=30, rand=lambda: 0.0) == 0.0
    assert backoff_delay(1000, base=0.5, cap=30, rand=lambda: 0.5) == 15.0
    # Retry-After is a floor, with a little jitter on top
    assert backoff_delay(5, base=0.5, cap=30, retry_after=2.0, rand=lambda: 0.0) == 2.0
    assert 2.0 <= backoff_delay(5, base=0.5, cap=30, retry_after=2.0) <= 2.5


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "3"}) == 0.25
    assert parse_retry_after({"retry-after": "garbage"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None
    http_date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    value = parse_retry_after({"Retry-After": http_date})
    assert value is not None and 25 <= value <= 31


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (429, "rate_limit", True),
        (500, "server", True),
        (503, "server", True),
        (529, "rate_limit", True),
        (408, "server", True),
        (401, "auth", False),
        (400, "client", False),
        (404, "client", False),
    ],
)
def test_status_classification(status: int, kind: str, retryable: bool) -> None:
    assert kind_for_status(status) == kind
    assert UpstreamError("x", kind=kind_for_status(status)).retryable is retryable
