"""Routing over vLLM-style replicas, against several simulated servers on loopback.

The simulator's /health and /metrics speak vLLM's route and metric names, so
the router reads them exactly as it would read vLLM: load from
``vllm:num_requests_running`` / ``_waiting`` (including other clients'
requests), prefix affinity, and draining of a replica that stops answering
/health until it is back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import anyio
import pytest
from openai import AsyncOpenAI

from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.replicas import parse_metrics, prefix_key
from agentbus.llm.router import LLMRouter
from agentbus.llm.types import ChatMessage
from agentbus.sim.config import SimConfig
from agentbus.sim.service import SimHandle, sim_service

#: health and load read every 50 ms, so the tests need not wait long
WATCH = EndpointLimits(health_interval_s=0.05, backoff_base=0.01, backoff_max=0.05)


@asynccontextmanager
async def server(**config: Any) -> AsyncIterator[SimHandle]:
    async with sim_service(SimConfig(experts=[], **config)) as sim:
        yield sim


def received(sim: SimHandle) -> int:
    return int(sim.metrics()["requests_received"])


def chat(task: int | str, turn: int = 0) -> list[ChatMessage]:
    """A module's call on a task: the same system + task prefix, then its own turn."""
    return [
        {"role": "system", "content": "You are the reasoning module of an LLM agent."},
        {"role": "user", "content": f"## Task\nProblem number {task}."},
        {"role": "assistant", "content": f"step {turn}"},
        {"role": "user", "content": f"feedback {turn}"},
    ]


async def settle(router: LLMRouter, spec: str, check: Any) -> dict[str, Any]:
    """Wait (at most 5 s) until the router's replica view satisfies ``check``."""
    with anyio.fail_after(5):
        while True:
            replicas = router.stats()["models"][spec]["replicas"]
            if check(replicas):
                return replicas
            await anyio.sleep(0.02)


async def test_metrics_page_has_vllm_names_and_live_counts() -> None:
    async with server(speed=0.25, max_num_seqs=4) as sim:
        client = AsyncOpenAI(base_url=sim.base_url, api_key="sim", max_retries=0)
        async with aiohttp.ClientSession() as http, anyio.create_task_group() as tg:
            for i in range(6):  # 4 run, 2 wait; at speed 0.25 they stay there a while
                tg.start_soon(
                    lambda i=i: client.chat.completions.create(
                        model="weak", messages=chat(i), max_tokens=50
                    )
                )
            for _ in range(500):
                if sim.engine.serving.running + sim.engine.serving.waiting == 6:
                    break
                await anyio.sleep(0.01)
            async with http.get(f"{sim.root_url}/health") as r:
                assert r.status == 200
            async with http.get(f"{sim.root_url}/metrics") as r:
                text = await r.text()
                assert r.headers["Content-Type"].startswith("text/plain")
        await client.close()
    load = parse_metrics(text)
    assert (load.running, load.waiting, load.kv_usage) == (4, 2, 1.0)
    assert 'vllm:num_requests_running{model_name="agentbus-sim"} 4.0' in text


async def test_busy_replica_is_avoided_by_load_from_its_metrics() -> None:
    """Another client keeps replica A busy; this router sees it in /metrics and goes to B, C."""
    async with server(speed=0.25) as a, server(speed=0) as b, server(speed=0) as c:
        spec = f"vllm:{a.base_url},{b.base_url},{c.base_url}#weak"
        other = AsyncOpenAI(base_url=a.base_url, api_key="sim", max_retries=0)
        async with anyio.create_task_group() as tg:
            for i in range(30):  # someone else's load on A (not this router's requests)
                tg.start_soon(
                    lambda i=i: other.chat.completions.create(
                        model="weak", messages=chat(f"other {i}"), max_tokens=100
                    )
                )
            async with LLMRouter(LLMConfig(limits=WATCH)) as router:
                llm = router.client(spec)
                await settle(router, spec, lambda rs: rs[0]["health"]["running"] == 30)
                for i in range(20):  # distinct tasks: no affinity, pure load
                    await llm.complete(chat(i))
        await other.close()
        assert received(a) == 30  # only the other client's
        assert received(b) + received(c) == 20 and min(received(b), received(c)) >= 5


async def test_same_prefix_sticks_to_one_replica_unless_it_is_much_busier() -> None:
    async with server(speed=0) as a, server(speed=0) as b, server(speed=0) as c:
        sims = (a, b, c)
        spec = f"vllm:{a.base_url},{b.base_url},{c.base_url}#weak"
        async with LLMRouter(LLMConfig(limits=WATCH)) as router:
            llm = router.client(spec)
            for task in range(6):
                before = [received(s) for s in sims]
                for turn in range(5):  # one task's calls, different later turns
                    await llm.complete(chat(task, turn))
                grew = [received(s) - n for s, n in zip(sims, before, strict=True)]
                assert sorted(grew) == [0, 0, 5]  # all five on one replica
            affinity = llm._client.affinity
            assert affinity.kept == 6 * 4 and affinity.moved == 0
        assert min(received(s) for s in sims) >= 1  # the tasks themselves spread out
    assert prefix_key(chat(1, 0)) == prefix_key(chat(1, 3)) != prefix_key(chat(2, 0))


async def test_affinity_yields_to_a_much_less_loaded_replica() -> None:
    async with server(speed=1) as a, server(speed=1) as b:
        spec = f"vllm:{a.base_url},{b.base_url}#weak"
        limits = WATCH.model_copy(update={"affinity_abs": 4, "affinity_rel": 1.5})
        async with LLMRouter(LLMConfig(limits=limits)) as router:
            llm = router.client(spec)
            async with anyio.create_task_group() as tg:
                for turn in range(20):  # one prefix, 20 at once
                    tg.start_soon(llm.complete, chat("hot", turn))
            affinity = llm._client.affinity
        # the first few stick, then the affine replica is 'much busier' and the rest spread
        assert affinity.kept >= 4 and affinity.moved >= 1
        assert min(received(a), received(b)) >= 5


async def test_replica_failing_health_is_drained_and_taken_back() -> None:
    async with server(speed=0) as a, server(speed=0) as c:
        async with server(speed=0) as b:
            port = b.port
            spec = f"vllm:{a.base_url},{b.base_url},{c.base_url}#weak"
            router = await LLMRouter(LLMConfig(limits=WATCH)).__aenter__()
            llm = router.client(spec)
            await settle(router, spec, lambda rs: all(r["health"]["running"] == 0 for r in rs))
        # B is gone (its server stopped): the monitor drains it, no request tries it
        await settle(router, spec, lambda rs: not rs[1]["health"]["healthy"])
        for i in range(12):
            await llm.complete(chat(i))
        stats = router.stats()["models"][spec]
        assert stats["errors"] == 0 and stats["retries"] == 0
        assert stats["replicas"][1]["calls"] == 0 and stats["replicas"][1]["health"]["drained"] == 1
        # B comes back on the same port: taken back on the next check, and used again
        async with server(speed=0, port=port) as b2:
            await settle(router, spec, lambda rs: rs[1]["health"]["healthy"])
            for i in range(12, 30):
                await llm.complete(chat(i))
            assert received(b2) >= 3
        await router.__aexit__(None, None, None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'vllm:num_requests_running{model_name="m"} 3\n'
            'vllm:num_requests_waiting{model_name="m"} 1\n'
            'vllm:gpu_cache_usage_perc{model_name="m"} 0.5\n',
            (3, 1, 0.5),
        ),
        ("# no vllm metrics here\nprocess_cpu_seconds_total 1.0\n", (0, 0, 0.0)),
    ],
)
def test_parse_metrics_reads_old_and_new_kv_names(text: str, expected: tuple[Any, ...]) -> None:
    load = parse_metrics(text)
    assert (load.running, load.waiting, load.kv_usage) == expected
