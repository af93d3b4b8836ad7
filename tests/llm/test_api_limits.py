"""Provider-style rate limits end to end: the simulator's limiter through both official SDKs.

The simulated provider (agentbus.sim.ratelimit) runs on loopback with a time
scale, so a provider minute lasts a second or two; the client is the real
router with the official ``openai`` and ``anthropic`` SDKs underneath.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest

from agentbus.llm.config import LLMConfig
from agentbus.llm.pacing import HeaderPacer, parse_duration, parse_headers, parse_reset_time
from agentbus.llm.router import LLMRouter
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.config import SimConfig
from agentbus.sim.ratelimit import ProviderLimitsConfig, format_duration
from agentbus.sim.service import SimHandle, sim_service

SYSTEM = "You are the planning module of an LLM agent. " * 30


def chat(i: int) -> list[ChatMessage]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"## Task\nproblem {i}\n\n## Observation\nstep {i}"},
    ]


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")


def provider(**limits: Any) -> SimConfig:
    """A provider with no serving delays; ``time_scale`` compresses its minute."""
    return SimConfig(speed=0, limits=ProviderLimitsConfig(**limits))


@pytest.fixture
async def small() -> AsyncIterator[SimHandle]:
    # 60 requests per provider minute, a minute lasting 2 s: 30 requests/s, 60 at once
    async with sim_service(provider(rpm=60, tpm=1_000_000, time_scale=30)) as sim:
        yield sim


def test_reset_formats_round_trip() -> None:
    assert parse_duration("6m0s") == 360.0
    assert parse_duration("1s") == 1.0
    assert parse_duration("20ms") == pytest.approx(0.02)
    assert parse_duration("1h2m3.5s") == pytest.approx(3723.5)
    assert parse_duration("0.5") == 0.5
    assert parse_duration("soon") is None and parse_duration("5x") is None
    for seconds in (0.0123, 0.9, 1.5, 59.0, 61.25, 360.0):
        assert parse_duration(format_duration(seconds)) == pytest.approx(seconds, abs=1e-3)
    now = time.time()
    assert parse_reset_time("2020-01-01T00:00:00Z", now) == 0.0
    assert parse_reset_time("not a time") is None


def test_headers_of_both_providers_parse() -> None:
    openai_style = {
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-reset-requests": "120ms",
        "x-ratelimit-limit-tokens": "200000",
        "x-ratelimit-remaining-tokens": "199000",
        "x-ratelimit-reset-tokens": "300ms",
    }
    r = parse_headers(openai_style)
    assert r["requests"].limit == 500 and r["requests"].remaining == 499
    assert r["requests"].rate == pytest.approx(1 / 0.12)
    assert r["tokens"].rate == pytest.approx(1000 / 0.3)
    from datetime import UTC, datetime, timedelta

    soon = (datetime.now(UTC) + timedelta(seconds=6)).isoformat().replace("+00:00", "Z")
    anthropic_style = {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "45",
        "anthropic-ratelimit-requests-reset": soon,
        "anthropic-ratelimit-input-tokens-limit": "30000",
        "anthropic-ratelimit-input-tokens-remaining": "29000",
        "anthropic-ratelimit-input-tokens-reset": soon,
        "anthropic-ratelimit-tokens-limit": "30000",
        "anthropic-ratelimit-tokens-remaining": "29000",
        "anthropic-ratelimit-tokens-reset": soon,
    }
    a = parse_headers(anthropic_style)
    assert set(a) == {"requests", "input-tokens"}  # "tokens" would count the input twice
    assert a["requests"].rate == pytest.approx(5 / 6, rel=0.05)
    assert parse_headers({"content-type": "application/json"}) == {}


async def test_openai_sdk_reads_the_headers_the_simulator_sends(small: SimHandle) -> None:
    client = openai.AsyncOpenAI(base_url=small.base_url, api_key="k", max_retries=0)
    try:
        raw = await client.chat.completions.with_raw_response.create(
            model="weak",
            messages=list(chat(0)),
            max_tokens=40,  # type: ignore[arg-type]
        )
    finally:
        await client.close()
    readings = parse_headers(raw.headers)
    assert readings["requests"].limit == 60 and readings["requests"].remaining == 59
    assert readings["requests"].rate == pytest.approx(30.0, rel=0.05)  # 60 per 2 s
    assert readings["tokens"].limit == 1_000_000


async def test_pacing_keeps_a_burst_under_the_limit_and_loses_nothing(small: SimHandle) -> None:
    """150 requests at once against 60 per (2 s) minute: paced, none refused, all answered."""
    import anyio

    config = LLMConfig(limits={"max_concurrency": 200, "backoff_base": 0.05})
    async with LLMRouter(config) as router:
        llm = router.client(f"openai:{small.base_url}#weak")
        params = SamplingParams(temperature=0.7, max_tokens=40)
        answers: list[str] = []

        async def one(i: int) -> None:
            answers.append((await llm.complete(chat(i), params)).text)

        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            for i in range(150):
                tg.start_soon(one, i)
        elapsed = time.monotonic() - started
        replica = router.stats()["models"][llm.spec.key]["replicas"][0]
        # what the progress line shows while the pacer holds requests back
        assert (router.rate_limit_note() or "").startswith("rate-limited: openai:weak at ")
        summary = router.summary()
    assert "rate limits openai:weak" in summary and "limit peak" in summary
    limits = small.metrics()["provider_limits"]
    assert len(answers) == 150 and limits["admitted"] == 150  # no request lost
    # the first few requests go out before any header was read; after that, none is refused
    assert limits["rejected_429"] <= 3, limits
    # 60 in the bucket, 90 more at 30/s: at least ~3 s whatever the client does
    assert elapsed >= 2.5
    assert replica["pacing"]["limits"]["requests"] == 60
    assert replica["adaptive"] is True  # openai: is adaptive by default


async def test_without_pacing_429s_are_retried_after_their_wait(small: SimHandle) -> None:
    import anyio

    config = LLMConfig(
        limits={
            "max_concurrency": 200,
            "pace_from_headers": False,
            "adaptive": {"enabled": False},
            "backoff_base": 0.05,
            # 120 unpaced requests race for a 30-per-second bucket: on a loaded machine
            # (the suite runs two workers on two cores) an unlucky one lost 30 times in
            # a row; the test is about the waits, not about giving up
            "max_retries": 500,
        }
    )
    async with LLMRouter(config) as router:
        llm = router.client(f"openai:{small.base_url}#weak")
        params = SamplingParams(temperature=0.7, max_tokens=40)
        done = 0

        async def one(i: int) -> None:
            nonlocal done
            await llm.complete(chat(i), params)
            done += 1

        async with anyio.create_task_group() as tg:
            for i in range(120):
                tg.start_soon(one, i)
        stats = llm.stats
    limits = small.metrics()["provider_limits"]
    assert done == 120 and limits["admitted"] == 120
    assert limits["rejected_429"] > 0 and stats.rate_limited == limits["rejected_429"]
    # every retry waited at least the Retry-After the 429 named (1/30 s for one request)
    assert stats.backoff_s >= stats.rate_limited * (1 / 30) * 0.9


async def test_anthropic_sdk_paced_and_529_retried_with_cache_reads() -> None:
    """The Messages route: anthropic-ratelimit-* headers, 529 overloaded, cache_read tokens."""
    import anyio

    cfg = provider(
        rpm=60,
        itpm=1_000_000,
        otpm=100_000,
        time_scale=30,
        latency_median_s=3.0,  # 0.1 s wall: requests overlap
        overload_above=3,
        overload_rate=0.3,
    )
    async with sim_service(cfg) as sim:
        limits = {
            "max_concurrency": 64,
            "backoff_base": 0.02,
            "backoff_max": 0.2,
            "adaptive": {"cooldown_s": 0.05},  # each 529 pauses admission this long
        }
        config = LLMConfig(limits={**limits, "max_retries": 30})
        async with LLMRouter(config) as router:
            llm = router.client(f"anthropic:{sim.root_url}#weak")
            params = SamplingParams(temperature=0.7, max_tokens=40)
            results = []

            async def one(i: int) -> None:
                results.append(await llm.complete(chat(i), params))

            async with anyio.create_task_group() as tg:
                for i in range(70):
                    tg.start_soon(one, i)
            replica = router.stats()["models"][llm.spec.key]["replicas"][0]
            stats = llm.stats
        limits = sim.metrics()["provider_limits"]
    assert len(results) == 70 and limits["admitted"] == 70  # nothing lost
    assert limits["overloaded_529"] > 0 and stats.overloaded == limits["overloaded_529"]
    assert limits["rejected_429"] <= 3
    assert set(replica["pacing"]["limits"]) == {"requests", "input-tokens", "output-tokens"}
    # the system prompt was marked with cache_control: later calls read it from the cache
    assert sum(r.cached_prompt_tokens for r in results) > 0
    assert all(r.cached_prompt_tokens < r.prompt_tokens for r in results)


async def test_openai_reports_cached_prefix_tokens() -> None:
    async with sim_service(provider(rpm=10_000, time_scale=1)) as sim:
        async with LLMRouter(LLMConfig()) as router:
            llm = router.client(f"openai:{sim.base_url}#weak")
            params = SamplingParams(temperature=0.7, max_tokens=40)
            first = await llm.complete(chat(1), params)
            second = await llm.complete(chat(2), params)
    assert first.cached_prompt_tokens == 0
    # the system prompt and the start of the task section are a shared prefix
    assert second.cached_prompt_tokens >= len(SYSTEM) // 4 - 16


async def test_header_pacer_corrects_to_what_the_provider_says() -> None:
    pacer = HeaderPacer(safety=1.0)
    first = {
        "x-ratelimit-limit-requests": "100",
        "x-ratelimit-remaining-requests": "99",
        "x-ratelimit-reset-requests": "10ms",
    }
    pacer.observe(first)
    sent = await pacer.acquire(HeaderPacer.costs(10, 10))
    assert pacer.buckets["requests"].level == pytest.approx(98, abs=0.5)
    # the provider says only 40 were left when it took this request: pull down by the drift
    answer = dict(first, **{"x-ratelimit-remaining-requests": "40"})
    pacer.observe(answer, sent)
    assert pacer.buckets["requests"].level == pytest.approx(40, abs=1.0)
