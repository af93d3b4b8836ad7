"""A serving model of one batched LLM server (vLLM-like), cheap enough for 10,000 calls.

What it models:

* **Continuous batching.** At most ``max_num_seqs`` requests run at once; the
  rest wait in a FIFO queue and join the batch as soon as a seat frees.
* **Prefill.** Time to first token = ``base_latency_s + uncached_prompt_tokens
  / prefill_tokens_per_s``. A prefix cache remembers recently seen prompt
  prefixes in blocks of ``block_tokens`` (LRU, ``prefix_cache_tokens`` in
  total); the leading blocks already cached cost nothing, as with vLLM's
  automatic prefix caching (shared system prompts, task text).
* **Decode.** Time per output token = ``decode_s_per_token * (1 +
  batch_slowdown * (b - 1))`` with ``b`` the batch size when the request is
  admitted: a fuller batch decodes each sequence more slowly but more tokens
  per second in total.
* **Capacity** (tokens/s at saturation) = ``max_num_seqs / tpot(max_num_seqs)``,
  the physical limit the benchmarks compare against.

Simplifications, on purpose: a request's per-token time is fixed at
admission (not re-evaluated when the batch changes later), prefill does not
slow down the decoding sequences, and there is one sleep per timed burst
(never a timer per token), so the CPU cost does not grow with tokens.
Steady-state throughput under saturation, which is what capacity means, is
exact under these rules. All delays are divided by ``speed``; ``speed=0``
means no delays at all (tests).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from agentbus.sim.model import CHARS_PER_TOKEN


class ServingConfig(BaseModel):
    """Serving-speed parameters of the simulated server (all times in seconds)."""

    model_config = ConfigDict(extra="forbid")

    #: time scale: 1.0 realistic, 10 ten times faster, 0 no delays at all
    speed: float = Field(1.0, ge=0.0)
    max_num_seqs: int = Field(64, ge=1)
    base_latency_s: float = Field(0.02, ge=0.0)
    prefill_tokens_per_s: float = Field(10_000.0, gt=0.0)
    decode_s_per_token: float = Field(0.015, gt=0.0)
    batch_slowdown: float = Field(0.03, ge=0.0)
    block_tokens: int = Field(16, ge=1)
    prefix_cache_tokens: int = Field(500_000, ge=0)


@dataclass(frozen=True)
class BatchSeat:
    """A request's place in the batch: its timing, already divided by speed."""

    ttft_s: float
    tpot_s: float
    cached_tokens: int
    batch_size: int

    def duration(self, completion_tokens: int) -> float:
        return self.ttft_s + completion_tokens * self.tpot_s


class PrefixCache:
    """LRU of prompt-prefix blocks, keyed by a chained hash of the blocks so far."""

    def __init__(self, block_chars: int, max_blocks: int) -> None:
        self.block_chars = block_chars
        self.max_blocks = max_blocks
        self._blocks: OrderedDict[int, None] = OrderedDict()

    def hit_chars(self, text: str) -> int:
        """Characters of ``text`` covered by cached leading blocks; then cache all blocks."""
        if self.max_blocks == 0:
            return 0
        blocks = self._blocks
        size = self.block_chars
        h = 0
        hit = 0
        ends = range(size, len(text) + 1, size)
        for end in ends:  # the cached run of leading blocks
            h = hash((h, text[end - size : end]))
            if h not in blocks:
                blocks[h] = None
                break
            blocks.move_to_end(h)
            hit = end
        else:
            return hit
        for end in range(hit + 2 * size, len(text) + 1, size):  # the rest: remember it
            h = hash((h, text[end - size : end]))
            blocks[h] = None
        while len(blocks) > self.max_blocks:
            blocks.popitem(last=False)
        return hit


class ServingModel:
    """Admission, batching and timing; the caller sleeps the returned times."""

    def __init__(self, config: ServingConfig | None = None) -> None:
        self.config = config or ServingConfig()
        c = self.config
        self._seats = anyio.Semaphore(c.max_num_seqs)
        self._cache = PrefixCache(
            block_chars=c.block_tokens * CHARS_PER_TOKEN,
            max_blocks=c.prefix_cache_tokens // c.block_tokens,
        )
        self.running = 0
        self.waiting = 0
        self.max_running = 0
        self.max_waiting = 0
        self.prefill_tokens = 0
        self.cached_tokens = 0

    def tpot(self, batch_size: int) -> float:
        """Seconds per output token per sequence with ``batch_size`` sequences (speed 1)."""
        c = self.config
        return c.decode_s_per_token * (1.0 + c.batch_slowdown * (batch_size - 1))

    @property
    def capacity_tokens_per_s(self) -> float:
        """Output tokens per second at saturation, at speed 1 (simulated time)."""
        n = self.config.max_num_seqs
        return n / self.tpot(n)

    @property
    def wall_capacity_tokens_per_s(self) -> float | None:
        """Capacity in wall-clock time (capacity x speed); None when there are no delays."""
        speed = self.config.speed
        return self.capacity_tokens_per_s * speed if speed > 0 else None

    def _scale(self, seconds: float) -> float:
        return seconds / self.config.speed if self.config.speed > 0 else 0.0

    async def sleep(self, seconds: float) -> None:
        """Sleep an already-scaled delay (skipped when there is none)."""
        if seconds > 0:
            await anyio.sleep(seconds)

    def prefix_hit(self, prompt_text: str, prompt_tokens: int) -> int:
        """Prompt tokens the prefix cache serves, added to the totals.

        The engine asks directly when a call takes no batch seat; :meth:`seat` asks
        for the calls that do.
        """
        cached = min(prompt_tokens, self._cache.hit_chars(prompt_text) // CHARS_PER_TOKEN)
        self.prefill_tokens += prompt_tokens - cached
        self.cached_tokens += cached
        return cached

    @asynccontextmanager
    async def seat(self, prompt_text: str, prompt_tokens: int) -> AsyncIterator[BatchSeat]:
        """Wait for a batch seat, then hold it while the caller decodes."""
        try:
            self._seats.acquire_nowait()
        except anyio.WouldBlock:
            self.waiting += 1
            self.max_waiting = max(self.max_waiting, self.waiting)
            try:
                await self._seats.acquire()
            finally:
                self.waiting -= 1
        try:
            self.running += 1
            self.max_running = max(self.max_running, self.running)
            c = self.config
            cached = self.prefix_hit(prompt_text, prompt_tokens)
            ttft = c.base_latency_s + (prompt_tokens - cached) / c.prefill_tokens_per_s
            yield BatchSeat(
                ttft_s=self._scale(ttft),
                tpot_s=self._scale(self.tpot(self.running)),
                cached_tokens=cached,
                batch_size=self.running,
            )
        finally:
            self.running -= 1
            self._seats.release()

    def stats(self) -> dict[str, Any]:
        return {
            "capacity_tokens_per_s": round(self.capacity_tokens_per_s, 1),
            "wall_capacity_tokens_per_s": (
                None
                if self.wall_capacity_tokens_per_s is None
                else round(self.wall_capacity_tokens_per_s, 1)
            ),
            "speed": self.config.speed,
            "max_num_seqs": self.config.max_num_seqs,
            "running": self.running,
            "queue_length": self.waiting,
            "max_running": self.max_running,
            "max_queue_length": self.max_waiting,
            "prefill_tokens": self.prefill_tokens,
            "prefix_cache_hit_tokens": self.cached_tokens,
        }
