"""Synchronous agents work in process (issue 41 item 4).

A sync SDK run the obvious way, inside ``asyncio.to_thread``, holds a thread
of the loop's default pool per episode while it waits for the gateway; the
gateway's own upstream calls needed that pool too (the OpenAI SDK runs
``get_platform`` there on a client's first request), so at the run's full
concurrency every episode waited until its time limit: 16 of 16 timed out
here before (2.5 minutes). With the run's roomy default pool
(agentbus/gateway/threads.py) none does. The simulator is reached over HTTP,
as in production; about 8 s under load.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import anyio
import orjson

from agentbus.gateway.threads import HEADROOM, roomy_default_executor
from tests.helpers.agent_probes import probe_run


def test_a_sync_client_in_to_thread_at_full_concurrency_never_times_out(tmp_path: Path) -> None:
    run_dir, _ = probe_run(
        tmp_path,
        ["ok-1", "ok-2", "ok-3", "ok-4"],
        agent="agent_probes:sync_thread",
        keep_going=True,
        agent_timeout_s=10.0,
        sim={"speed": 0, "transport": "http"},
    )
    lines = (run_dir / "events.jsonl").read_bytes().splitlines()
    episodes = [e for e in map(orjson.loads, lines) if e.get("type") == "episode.ended"]
    assert len(episodes) == 16
    failed = [e["outcome"]["reason"] for e in episodes if e["outcome"].get("error_kind")]
    assert failed == []
    assert all(e["outcome"]["llm_calls"] >= 1 for e in episodes)


def test_the_roomy_pool_is_the_loops_default_only_inside() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        before = getattr(loop, "_default_executor", None)
        with roomy_default_executor(100) as pool:
            assert pool._max_workers == 100 + HEADROOM
            assert await asyncio.to_thread(lambda: 7) == 7
            assert getattr(loop, "_default_executor", None) is pool
        assert getattr(loop, "_default_executor", None) is before

    anyio.run(main)
