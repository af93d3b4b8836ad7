"""Room in the default thread pool for synchronous agents, so gateway I/O never waits for it.

An in-process agent built on a synchronous SDK (smolagents, a sync OpenAI
client) runs the obvious way, in ``asyncio.to_thread``: each episode holds a
thread of the event loop's default pool while its sync client waits for the
gateway. That pool has ``min(32, CPUs + 4)`` threads (6 on two cores), and
the gateway's own upstream calls need it too: the OpenAI and Anthropic SDKs
run ``get_platform`` there on a client's first request, and aiohttp resolves
host names there. With every thread held by an agent waiting for the gateway,
the gateway waited for a thread: 8 of 16 episodes timed out, and all 16 in
our reproduction (tests/core/test_sync_agents.py). :func:`roomy_default_executor`
gives the loop a default pool with a thread for every episode the run may
hold in flight plus :data:`HEADROOM` for agentbus's own blocking calls;
threads are only started when used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

#: threads kept for agentbus's own work beyond one per episode in flight
HEADROOM = 32


@contextmanager
def roomy_default_executor(episodes: int) -> Iterator[ThreadPoolExecutor]:
    """Make the running loop's default pool hold ``episodes + HEADROOM`` threads, inside.

    On exit the previous pool comes back (the loop's own default, if it had
    made one); the roomy pool is shut down without waiting for agent threads
    still blocked in a sync call (they end with their call).
    """
    loop = asyncio.get_running_loop()
    previous = getattr(loop, "_default_executor", None)
    pool = ThreadPoolExecutor(max_workers=episodes + HEADROOM, thread_name_prefix="agentbus-io")
    loop.set_default_executor(pool)
    try:
        yield pool
    finally:
        if isinstance(previous, ThreadPoolExecutor):
            loop.set_default_executor(previous)
        else:  # asyncio makes its own on the next use
            loop._default_executor = None  # type: ignore[attr-defined]
        pool.shutdown(wait=False)


__all__ = ["HEADROOM", "roomy_default_executor"]
