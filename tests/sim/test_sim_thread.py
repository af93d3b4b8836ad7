"""The simulator on a thread of its own (``SimConfig.thread``) and the run's GC pacing.

Issue 53: at thousands of episodes the simulator's work and CPython's
collections held the run's event loop for hundreds of milliseconds. These
check the behaviour that fixes rest on, cheaply (speed 0, a few calls): the
threaded simulator answers exactly as the one on the caller's loop (text,
usage, cached tokens, faults), its HTTP server works, a caller's cancellation
reaches it, answers come back in bounded batches, and a run freezes its
starting heap, paces the young collections and restores everything after.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time

import aiohttp
import pytest

from agentbus.executors.gcpolicy import steady_gc
from agentbus.llm.types import SamplingParams
from agentbus.sim.config import SimConfig
from agentbus.sim.faults import FaultConfig, SimFault
from agentbus.sim.service import sim_service
from agentbus.sim.worker import MIN_BATCH, Handoff

SHARED = "Read the task, think it through and answer briefly. " * 4
PROMPTS = [
    [
        {"role": "system", "content": f"You are the {role} module of an agent. " + SHARED},
        {"role": "user", "content": f"Task {i}: what is {i} + {i}? " + "context " * (i * 5)},
    ]
    for i in range(12)
    for role in ("planning", "reasoning")
]


async def _answers(config: SimConfig) -> list[tuple[str, int, int, int] | str]:
    out: list[tuple[str, int, int, int] | str] = []
    async with sim_service(config) as sim:
        for msgs in PROMPTS:
            try:
                c = await sim.transport.complete("weak", msgs, SamplingParams(max_tokens=64))
            except SimFault as exc:
                out.append(f"fault {exc.status}")
                continue
            out.append((c.text, c.prompt_tokens, c.completion_tokens, c.cached_prompt_tokens))
    return out


async def test_threaded_simulator_answers_exactly_as_on_the_loop() -> None:
    faults = FaultConfig(rate_429=0.2, rate_500=0.1, seed=3)
    base = SimConfig(speed=0, transport="inprocess", experts=[], faults=faults)
    on_loop = await _answers(base)
    threaded = await _answers(base.model_copy(update={"thread": True}))
    assert threaded == on_loop
    assert any(isinstance(a, str) for a in on_loop)  # faults were drawn, in the same order
    assert any(isinstance(a, tuple) and a[3] > 0 for a in on_loop)  # prefix cache hits too


async def test_threaded_http_server_and_engine_run_off_the_callers_thread() -> None:
    seen: set[int] = set()
    async with sim_service(SimConfig(speed=0, experts=[], thread=True)) as sim:
        run = sim.engine.run

        async def spy(*args: object, **kwargs: object) -> object:
            seen.add(threading.get_ident())
            return await run(*args, **kwargs)  # type: ignore[arg-type]

        sim.engine.run = spy  # type: ignore[method-assign]
        body = {"model": "weak", "messages": PROMPTS[0], "max_tokens": 16}
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{sim.base_url}/chat/completions", json=body) as resp,
        ):
            assert resp.status == 200
            data = await resp.json()
        assert data["choices"][0]["message"]["content"]
        await sim.transport.complete("weak", PROMPTS[1])
    assert seen and threading.get_ident() not in seen


async def test_cancelling_the_caller_cancels_the_request_on_the_simulator() -> None:
    config = SimConfig(speed=0.001, transport="inprocess", experts=[], thread=True)
    async with sim_service(config) as sim:
        task = asyncio.ensure_future(sim.transport.complete("weak", PROMPTS[3]))
        for _ in range(200):
            await asyncio.sleep(0.005)
            if sim.engine.metrics.in_flight:
                break
        assert sim.engine.metrics.in_flight == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(200):
            if sim.engine.metrics.by_status["cancelled"]:
                break
            await asyncio.sleep(0.005)
        assert sim.engine.metrics.by_status["cancelled"] == 1
        assert sim.engine.metrics.in_flight == 0


async def test_a_burst_of_answers_is_handed_over_in_bounded_batches() -> None:
    loop = asyncio.get_running_loop()
    handoff = Handoff(loop, budget_s=0.0)  # every iteration counts as over budget
    per_iteration: list[int] = []
    ran = 0

    def item(_: object) -> None:
        nonlocal ran
        ran += 1
        time.sleep(0.0001)

    async def count_iterations() -> None:
        last = 0
        while ran < 500:
            await asyncio.sleep(0)
            per_iteration.append(ran - last)
            last = ran

    counter = asyncio.ensure_future(count_iterations())
    await asyncio.to_thread(lambda: [handoff.put(item, None) for _ in range(500)])
    await asyncio.wait_for(counter, 10)
    assert ran == 500
    assert max(per_iteration) <= 32  # the first batch; then it halves down to MIN_BATCH
    assert handoff.batch == MIN_BATCH


async def test_a_run_freezes_its_starting_heap_and_paces_young_collections() -> None:
    before_threshold = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with steady_gc():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[2] >= 100
        young = gc.get_stats()[0]["collections"]
        await asyncio.sleep(0.15)
        assert gc.get_stats()[0]["collections"] - young >= 3  # paced by time
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before_threshold
