"""The run's collector pacing hands the allocator's free pages back (glibc's malloc_trim).

A run frees as much as it allocates once warm, but glibc keeps freed pages
below the top of its heap; without the hand-back the process's RSS only ever
rises (benchmarks/soak.py's second half).
"""

from __future__ import annotations

import asyncio
import os

import pytest

from agentbus.executors import gcpolicy
from agentbus.executors.gcpolicy import steady_gc

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE / 2**20


@pytest.mark.skipif(gcpolicy._TRIM is None, reason="no malloc_trim in this C library")
async def test_freed_memory_goes_back_to_the_system_during_a_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gcpolicy, "TICK_S", 0.001)
    monkeypatch.setattr(gcpolicy, "TRIM_EVERY", 25)
    with steady_gc():
        await asyncio.sleep(0.1)  # a first trim: what earlier tests left is handed back
        blocks = [os.urandom(16 * 1024) for _ in range(4096)]  # 64 MB on the C heap
        pin = os.urandom(16 * 1024)  # above them: glibc cannot just lower the heap's top
        full = rss_mb()
        del blocks
        freed = rss_mb()
        await asyncio.sleep(0.2)  # several trim ticks
        after = rss_mb()
    del pin
    assert full - freed < 16, "glibc kept the freed blocks' pages (nothing to show otherwise)"
    assert freed - after > 48, f"RSS {full:.0f} MB full, {freed:.0f} freed, {after:.0f} after"
