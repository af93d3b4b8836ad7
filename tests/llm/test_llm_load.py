"""Issue 3's "done when": 2,000 concurrent chat completions through AsyncOpenAI on loopback.

Each simulated request takes a few tenths of a second (a batch as large as
the load, no slowdown with batch size), so that requests overlap at the
server and the test measures the client stack rather than a queue. Every
call goes through the router, the official SDK and a real socket; 400 extra
duplicate calls show coalescing in the server's own request counter.
"""

from __future__ import annotations

import resource
import time

import anyio
import pytest

from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.router import LLMRouter
from agentbus.llm.types import ChatMessage
from agentbus.sim.config import SimConfig
from agentbus.sim.service import sim_service

DISTINCT = 2000
DUPLICATES = 400


def _enough_file_descriptors(needed: int) -> bool:
    """Client and server sockets share this process: raise the soft limit if we may."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return True
    if hard != resource.RLIM_INFINITY and hard < needed:
        return False
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    return True


def prompt(i: int) -> list[ChatMessage]:
    return [
        {"role": "system", "content": "You are the action module of an LLM agent."},
        {"role": "user", "content": f"## Task\nEpisode {i}: take the next step."},
    ]


@pytest.mark.slow
async def test_two_thousand_concurrent_completions_through_asyncopenai() -> None:
    if not _enough_file_descriptors(2 * DISTINCT + 512):
        pytest.skip("the file descriptor limit is too low for 2,000 loopback connections")
    errors: list[BaseException] = []
    texts: dict[int, str] = {}

    async def one(i: int) -> None:
        try:
            texts[i] = (await llm.complete(prompt(i % DISTINCT))).text
        except Exception as exc:
            errors.append(exc)

    config = LLMConfig(limits=EndpointLimits(max_concurrency=DISTINCT))
    async with sim_service(
        SimConfig(speed=1, max_num_seqs=DISTINCT, batch_slowdown=0, experts=[])
    ) as sim:
        async with LLMRouter(config, sim=sim) as router:
            llm = router.client("sim:weak")
            start = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for i in range(DISTINCT + DUPLICATES):
                    tg.start_soon(one, i)
            elapsed = time.perf_counter() - start
            total = router.stats()["total"]
            summary = router.summary()
        metrics = sim.metrics()

    assert errors == []
    assert len(texts) == DISTINCT + DUPLICATES
    assert all(texts[i] == texts[i % DISTINCT] for i in range(DISTINCT, DISTINCT + DUPLICATES))
    # upstream: one call per distinct prompt, all served, many at once
    assert metrics["requests_received"] == DISTINCT == metrics["requests_served"]
    assert metrics["max_in_flight"] >= 500
    assert total["requested"] == DISTINCT + DUPLICATES and total["sent"] == DISTINCT
    assert total["coalesced"] + total["cache_hits"] == DUPLICATES and total["errors"] == 0
    assert summary.startswith(f"LLM calls: requested {DISTINCT + DUPLICATES}, sent {DISTINCT}")
    peak = metrics["max_in_flight"]
    print(f"\n{DISTINCT + DUPLICATES} calls in {elapsed:.1f}s, server peak {peak} in flight")
    print(summary)
