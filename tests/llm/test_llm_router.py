"""The router against the real simulator: retries under injected faults, Retry-After,
limits measured server-side, replicas, shared calls and the on-disk cache."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentbus.core.errors import InfraError
from agentbus.llm.config import AdaptiveConcurrency, EndpointLimits, LLMConfig
from agentbus.llm.router import LLMRouter
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.config import SimConfig
from agentbus.sim.faults import FaultConfig
from agentbus.sim.service import SimHandle, sim_service

FAST = dict(backoff_base=0.01, backoff_max=0.05)


def chat(i: int | str) -> list[ChatMessage]:
    return [
        {"role": "system", "content": "You are the reasoning module of an LLM agent."},
        {"role": "user", "content": f"## Task\nProblem number {i}."},
    ]


@asynccontextmanager
async def running(**config: Any) -> AsyncIterator[SimHandle]:
    async with sim_service(SimConfig(experts=[], **config)) as sim:
        yield sim


def metric(sim: SimHandle, name: str) -> Any:
    return sim.metrics()[name]


async def gather(llm: Any, prompts: list[list[ChatMessage]], params: Any = None) -> list[Any]:
    results: list[Any] = [None] * len(prompts)

    async def one(i: int) -> None:
        results[i] = await llm.complete(prompts[i], params)

    async with anyio.create_task_group() as tg:
        for i in range(len(prompts)):
            tg.start_soon(one, i)
    return results


async def test_retries_ride_out_429_500_and_dropped_connections() -> None:
    faults = FaultConfig(rate_429=0.15, retry_after_s=0.02, rate_500=0.15, rate_drop=0.1, seed=7)
    async with running(speed=0, faults=faults) as sim:
        cfg = LLMConfig(limits=EndpointLimits(max_retries=10, **FAST))
        async with LLMRouter(cfg, sim=sim) as router:
            results = await gather(router.client("sim:weak"), [chat(i) for i in range(120)])
            stats = router.stats()["total"]
        assert all(r.text for r in results)
        injected = metric(sim, "faults_injected")
        assert injected["429"] > 0 and injected["500"] > 0 and injected["drop"] > 0
        assert stats["errors"] == 0 and stats["sent"] == 120
        # every injected fault cost exactly one retry, and every retry reached the server
        assert stats["retries"] == injected["429"] + injected["500"] + injected["drop"]
        assert stats["rate_limited"] == injected["429"]
        assert metric(sim, "requests_received") == 120 + stats["retries"]


async def test_retry_after_is_honoured_then_one_infra_error() -> None:
    faults = FaultConfig(rate_429=1.0, retry_after_s=0.3)
    async with running(speed=0, faults=faults) as sim:
        cfg = LLMConfig(limits=EndpointLimits(max_retries=2, backoff_base=0.001, backoff_max=0.01))
        async with LLMRouter(cfg, sim=sim) as router:
            start = time.monotonic()
            with pytest.raises(InfraError) as info:
                await router.client("sim:weak").complete(chat(0))
            elapsed = time.monotonic() - start
        message = str(info.value)
        assert elapsed >= 0.6  # two waits of Retry-After
        assert metric(sim, "requests_received") == 3
        assert "HTTP 429" in message and "gave up after 3 attempts" in message
        assert f"sim:weak at {sim.base_url}" in message and "\n" not in message


async def test_timeouts_are_retried_then_reported() -> None:
    faults = FaultConfig(rate_stall=1.0, stall_s=1.0)
    async with running(speed=0, faults=faults) as sim:
        limits = EndpointLimits(read_timeout=0.15, max_retries=1, **FAST)
        async with LLMRouter(LLMConfig(limits=limits), sim=sim) as router:
            with pytest.raises(InfraError, match=r"timed out.*gave up after 2 attempts"):
                await router.client("sim:weak").complete(chat(0))


async def test_inprocess_faults_are_retried_too() -> None:
    faults = FaultConfig(rate_429=0.2, retry_after_s=0.01, rate_500=0.2, rate_drop=0.1, seed=3)
    async with running(speed=0, faults=faults, transport="inprocess") as sim:
        cfg = LLMConfig(limits=EndpointLimits(max_retries=10, **FAST))
        async with LLMRouter(cfg, sim=sim) as router:
            results = await gather(router.client("sim:weak"), [chat(i) for i in range(60)])
            stats = router.stats()["total"]
        assert len(results) == 60 and stats["errors"] == 0 and stats["retries"] > 0


async def test_max_concurrency_is_never_exceeded_server_side() -> None:
    async with running(speed=50, max_num_seqs=64) as sim:
        cfg = LLMConfig(limits=EndpointLimits(max_concurrency=5))
        async with LLMRouter(cfg, sim=sim) as router:
            await gather(router.client("sim:weak"), [chat(i) for i in range(40)])
            replica = router.stats()["models"]["sim:weak"]["replicas"][0]
        assert metric(sim, "max_in_flight") == 5
        assert replica["peak_in_flight"] == 5


async def test_rpm_bucket_paces_calls() -> None:
    async with running(speed=0) as sim:
        cfg = LLMConfig(limits=EndpointLimits(rpm=1200))  # 20/s, burst of 20
        async with LLMRouter(cfg, sim=sim) as router:
            start = time.monotonic()
            await gather(router.client("sim:weak"), [chat(i) for i in range(40)])
            assert time.monotonic() - start >= 0.9


async def test_adaptive_concurrency_backs_off_and_completes() -> None:
    faults = FaultConfig(rate_429=0.3, retry_after_s=0.05, seed=11)
    async with running(speed=50, faults=faults) as sim:
        adaptive = AdaptiveConcurrency(enabled=True, start=4, cooldown_s=0.05)
        limits = EndpointLimits(max_concurrency=32, max_retries=12, adaptive=adaptive, **FAST)
        async with LLMRouter(LLMConfig(limits=limits), sim=sim) as router:
            await gather(router.client("sim:weak"), [chat(i) for i in range(80)])
            stats = router.stats()
        replica = stats["models"]["sim:weak"]["replicas"][0]
        assert stats["total"]["errors"] == 0 and stats["total"]["rate_limited"] > 0
        assert replica["peak_in_flight"] <= 32
        assert metric(sim, "max_in_flight") <= 32
        assert replica["concurrency_limit"] < 32  # it shrank after the 429s


async def test_replicas_are_balanced_and_a_failing_one_sits_out() -> None:
    async with running(speed=50) as a, running(speed=50) as b:
        spec = f"vllm:{a.base_url},{b.base_url}#weak"
        async with LLMRouter(LLMConfig(), sim=a) as router:
            await gather(router.client(spec), [chat(i) for i in range(60)])
        ra, rb = metric(a, "requests_received"), metric(b, "requests_received")
        assert ra + rb == 60 and abs(ra - rb) <= 6

    async with running(speed=20) as good, running(speed=0, faults=FaultConfig(rate_500=1.0)) as bad:
        spec = f"vllm:{good.base_url},{bad.base_url}#weak"
        limits = EndpointLimits(replica_failures=2, replica_cooldown_s=30, max_retries=5, **FAST)
        async with LLMRouter(LLMConfig(limits=limits), sim=good) as router:
            llm = router.client(spec)
            assert [r.gate.concurrency.current_limit for r in llm._client.replicas] == [64, 64]
            first = await gather(llm, [chat(i) for i in range(20)])
            seen_by_bad = metric(bad, "requests_received")
            for i in range(20, 30):  # the bad replica is cooling down: none of these reach it
                await llm.complete(chat(i))
            replicas = router.stats()["models"][spec]["replicas"]
        assert all(r.text for r in first)
        assert metric(bad, "requests_received") == seen_by_bad
        assert metric(good, "requests_received") == 30
        assert replicas[1]["taken_out"] >= 1 and replicas[1]["errors"] == seen_by_bad


async def test_identical_concurrent_calls_are_sent_once() -> None:
    async with running(speed=20) as sim:
        async with LLMRouter(LLMConfig(), sim=sim) as router:
            results = await gather(router.client("sim:weak"), [chat("same")] * 50)
            total = router.stats()["total"]
            summary = router.summary()
        assert metric(sim, "requests_received") == 1
        assert len({r.text for r in results}) == 1
        assert sum(not r.cached for r in results) == 1
        assert total["requested"] == 50 and total["sent"] == 1 and total["coalesced"] == 49
        assert summary.startswith("LLM calls: requested 50, sent 1 (0.02 of requested")


@pytest.mark.parametrize(
    ("policy", "params", "sent"),
    [
        ("auto", SamplingParams(temperature=0.0), 1),
        ("auto", SamplingParams(temperature=0.7), 4),
        ("auto", SamplingParams(temperature=0.7, seed=5), 1),
        ("off", SamplingParams(temperature=0.0), 4),
        ("on", SamplingParams(temperature=0.7), 1),
    ],
)
async def test_cache_policy(policy: str, params: SamplingParams, sent: int) -> None:
    async with running(speed=0) as sim:
        async with LLMRouter(LLMConfig(cache=policy), sim=sim) as router:
            llm = router.client("sim:weak")
            for _ in range(4):
                await llm.complete(chat(1), params)
            total = router.stats()["total"]
        assert metric(sim, "requests_received") == sent == total["sent"]
        assert total["requested"] == 4 and total["cache_hits"] == 4 - sent


async def test_disk_cache_serves_a_second_run(tmp_path: Path) -> None:
    async with running(speed=0) as sim:
        first_texts = []
        async with LLMRouter(LLMConfig(cache_dir=tmp_path), sim=sim) as router:
            for i in range(3):
                first_texts.append((await router.client("sim:weak").complete(chat(i))).text)
        async with LLMRouter(LLMConfig(cache_dir=tmp_path), sim=sim) as router:
            again = [await router.client("sim:weak").complete(chat(i)) for i in range(3)]
            stats = router.stats()
        assert [r.text for r in again] == first_texts and all(r.cached for r in again)
        assert metric(sim, "requests_received") == 3
        assert stats["cache"]["loaded_from_disk"] == 3 and stats["total"]["sent"] == 0


async def test_default_sampling_comes_from_config() -> None:
    async with running(speed=0) as sim:
        cfg = LLMConfig(sampling={"max_tokens": 5})
        async with LLMRouter(cfg, sim=sim) as router:
            result = await router.client("sim:weak").complete(chat(0))
        assert result.completion_tokens <= 5 and result.finish_reason == "length"


async def test_anthropic_path_retries_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    faults = FaultConfig(rate_429=0.3, retry_after_s=0.02, rate_500=0.2, seed=5)
    async with running(speed=0, faults=faults) as sim:
        cfg = LLMConfig(limits=EndpointLimits(max_retries=10, **FAST))
        async with LLMRouter(cfg, sim=sim) as router:
            spec = f"anthropic:{sim.root_url}#weak"
            results = await gather(router.client(spec), [chat(i) for i in range(30)])
            stats = router.stats()["total"]
        injected = metric(sim, "faults_injected")
        assert all(r.text for r in results) and stats["errors"] == 0
        assert stats["retries"] == injected["429"] + injected["500"] > 0
        assert stats["rate_limited"] == injected["429"]
