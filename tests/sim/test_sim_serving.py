"""The serving model: batching, saturation near the stated capacity, TTFT and prefix cache."""

from __future__ import annotations

import time
from collections.abc import Sequence

import anyio
import pytest

from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.engine import SimEngine, SimRequest
from agentbus.sim.model import SimModel
from agentbus.sim.serving import ServingConfig, ServingModel

FAST = {
    "max_num_seqs": 8,
    "base_latency_s": 0.0,
    "prefill_tokens_per_s": 1e9,
    "decode_s_per_token": 0.01,
    "batch_slowdown": 0.05,
}


async def _decode(serving: ServingModel, tokens: int) -> None:
    async with serving.seat("", 0) as seat:
        await serving.sleep(seat.duration(tokens))


async def _throughput(serving: ServingModel, requests: int, tokens: int) -> float:
    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(requests):
            tg.start_soon(_decode, serving, tokens)
    return requests * tokens / (time.perf_counter() - started)


def test_capacity_formula() -> None:
    s = ServingModel(ServingConfig(**FAST, speed=1.0))
    # 8 sequences, each 0.01 * (1 + 0.05 * 7) s per token
    assert s.capacity_tokens_per_s == pytest.approx(8 / 0.0135)
    assert ServingModel(ServingConfig(**FAST, speed=4.0)).wall_capacity_tokens_per_s == (
        pytest.approx(4 * 8 / 0.0135)
    )
    assert ServingModel(ServingConfig(**FAST, speed=0.0)).wall_capacity_tokens_per_s is None


async def test_throughput_saturates_near_capacity() -> None:
    serving = ServingModel(ServingConfig(**FAST, speed=4.0))
    cap = serving.wall_capacity_tokens_per_s
    assert cap is not None
    saturated = await _throughput(serving, requests=32, tokens=80)
    assert 0.75 * cap < saturated < 1.2 * cap
    assert serving.max_running == 8  # never more than max_num_seqs in the batch
    assert serving.max_waiting >= 24  # the rest queued
    light = await _throughput(ServingModel(ServingConfig(**FAST, speed=4.0)), 2, 80)
    assert light < 0.45 * cap  # two sequences cannot use the capacity


def _seat_ttft(serving: ServingModel, text: str) -> float:
    async def go() -> float:
        async with serving.seat(text, len(text) // 4) as seat:
            return seat.ttft_s

    return anyio.run(go)


def test_ttft_grows_with_prompt_tokens_and_shrinks_with_a_prefix_hit() -> None:
    cfg = ServingConfig(speed=1.0, base_latency_s=0.01, prefill_tokens_per_s=10_000)
    serving = ServingModel(cfg)
    short = _seat_ttft(serving, "a" * 400 + "x")
    long = _seat_ttft(serving, "b" * 40_000 + "x")
    assert short == pytest.approx(0.01 + 100 / 10_000, rel=0.01)
    assert long == pytest.approx(0.01 + 10_000 / 10_000, rel=0.01)
    # the same long prefix again: only the new tail is prefilled
    again = _seat_ttft(serving, "b" * 40_000 + "a different ending " * 10)
    assert again < 0.05
    assert serving.cached_tokens >= 9_900
    # no prefix cache: full price every time
    cold = ServingModel(cfg.model_copy(update={"prefix_cache_tokens": 0}))
    _seat_ttft(cold, "b" * 40_000)
    assert _seat_ttft(cold, "b" * 40_000) == pytest.approx(long, rel=0.01)


async def test_streamed_first_token_arrives_after_prefill() -> None:
    engine = SimEngine(
        SimModel(),
        ServingModel(
            ServingConfig(
                speed=1.0,
                base_latency_s=0.0,
                prefill_tokens_per_s=40_000,
                decode_s_per_token=0.0005,
            )
        ),
    )

    async def first_token_after(messages: list[ChatMessage]) -> float:
        started = time.perf_counter()
        seen: list[float] = []

        async def emit(pieces: Sequence[str]) -> None:
            if not seen:
                seen.append(time.perf_counter() - started)

        await engine.run(SimRequest("weak", messages, SamplingParams()), emit)
        return seen[0]

    short = await first_token_after([{"role": "user", "content": "hi"}])
    long = await first_token_after([{"role": "user", "content": "z" * 32_000}])  # 8k tokens
    assert short < 0.1
    assert 0.18 < long < 0.6
