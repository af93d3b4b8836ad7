"""What to run next: task blocks in order, a bounded window of them, and retries.

The runtime pulls episodes from a :class:`WorkQueue` only when a concurrency
permit frees. The queue hands out whole *blocks* (usually one task with every
coalition of it), task-major, and starts a new block only while fewer than
``window`` blocks are unsettled, so complete blocks arrive early and the live
estimate (which admits blocks in order, see :mod:`attribution.blocks`) has
something honest to show after a few tasks rather than at the end. The window
opens gradually (``start`` blocks, ``RAMP`` more per block's worth of ended
episodes, up to ``window``): the first blocks then finish on a lightly loaded server,
and the run reaches its full width after a few blocks. The ramp counts ended
episodes rather than settled blocks because a block settles only when its
longest episode ends (a failure running to the step limit): a ramp paced by
those stragglers kept the server half idle. A cell
whose attempt failed on the infrastructure is retried (attempt + 1) ahead of
new work, up to ``max_attempts`` tries in this process; after that it is
given up and reported, never counted as a task failure.

Blocks come from a *provider*: a plain iterator for a fixed plan, or an async
callable (the adaptive scheduler) asked only when the window has room, so it
chooses with the freshest estimates.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass

import anyio

from agentbus.core.episode import EpisodeSpec
from agentbus.core.record import EpisodeRecord

#: error kinds worth another try (a bad config fails the same way every time)
RETRYABLE = frozenset({"infra", "timeout", "actor"})

#: blocks the window grows by per block's worth of ended episodes. Measured on the
#: default run and benchmarks/saturation.py (16 tasks): 1 gave the first estimate
#: after 36 of 480 episodes and 0.75x of raw throughput; 2 gives it after 45 and
#: 0.83x, with the admitted tasks still climbing steadily (4, 7, 14 after 120, 240,
#: 360 episodes); opening fully once the first block settled gave 0.85x, but
#: then the later blocks all end together and the estimate sat at 3 tasks from
#: 120 to 240 episodes.
RAMP = 2


@dataclass(frozen=True, slots=True)
class Block:
    """One scheduling unit: the cells of a task block and the specs still to run."""

    cells: tuple[str, ...]
    specs: tuple[EpisodeSpec, ...]
    task: str = ""


BlockProvider = Callable[[], Awaitable[Block | None]]
BlockListener = Callable[[int, Block], None]
GiveUpListener = Callable[[str], None]


class WorkQueue:
    """An async iterable of episode specs; see the module docstring."""

    def __init__(
        self,
        blocks: Iterator[Block] | BlockProvider,
        *,
        window: int,
        max_attempts: int = 3,
        on_block: BlockListener | None = None,
        on_give_up: GiveUpListener | None = None,
        first_block: int = 0,
        start: int = 2,
    ) -> None:
        if window < 1:
            raise ValueError("window must be at least 1")
        self._blocks = blocks
        self.window = window
        self.max_attempts = max(1, max_attempts)
        self.on_block = on_block
        self.on_give_up = on_give_up
        self.next_block = first_block
        self.first_block = first_block
        self.start = max(1, start)
        self.settled_blocks = 0
        #: cells that reached a final attempt (counted or given up)
        self.ended_cells = 0
        #: cells handed out in blocks so far (for the mean block size)
        self.issued_cells = 0
        self._retry: deque[EpisodeSpec] = deque()
        self._ready: deque[EpisodeSpec] = deque()
        self._pending: dict[int, set[str]] = {}
        self._tries: dict[str, int] = {}
        self._changed = anyio.Event()
        self._exhausted = False
        self._stopped = False
        self.given_up: list[str] = []
        self.retried = 0

    # -- feeding back ---------------------------------------------------------

    def settle(self, spec: EpisodeSpec, record: EpisodeRecord) -> None:
        """Take one finished attempt: count it, retry it, or give its cell up."""
        cell = spec.episode_id
        if not record.counts:
            tries = self._tries.get(cell, 0) + 1
            self._tries[cell] = tries
            kind = record.outcome.error_kind
            if tries < self.max_attempts and kind in RETRYABLE and not self._stopped:
                self._retry.append(dataclasses.replace(spec, attempt=spec.attempt + 1))
                self.retried += 1
                self._wake()
                return
            self.given_up.append(cell)
            if self.on_give_up is not None:
                self.on_give_up(cell)
        self.ended_cells += 1
        if spec.block is not None:
            pending = self._pending.get(spec.block)
            if pending is not None:
                pending.discard(cell)
                if not pending:
                    del self._pending[spec.block]
                    self.settled_blocks += 1
        self._wake()

    def stop(self) -> None:
        """Hand out nothing more (in-flight episodes finish; no new block, no retry)."""
        self._stopped = True
        self._wake()

    @property
    def width(self) -> int:
        """Blocks allowed in flight now: the slow-start window.

        ``RAMP`` more blocks per block's worth of ended episodes (and never
        fewer than the settled blocks), so the window grows quickly without
        waiting for each block's slowest one.
        """
        opened = max(1, self.next_block - self.first_block)
        mean_block = max(1.0, self.issued_cells / opened)
        grown = max(self.settled_blocks, int(RAMP * self.ended_cells / mean_block))
        return min(self.window, self.start + grown)

    @property
    def unsettled(self) -> int:
        """Blocks handed out whose cells have not all settled."""
        return len(self._pending)

    # -- handing out ----------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[EpisodeSpec]:
        return self._generate()

    async def _generate(self) -> AsyncIterator[EpisodeSpec]:
        while not self._stopped:
            if self._retry:
                yield self._retry.popleft()
            elif self._ready:
                yield self._ready.popleft()
            elif not self._exhausted and self.unsettled < self.width:
                await self._open_block()
            elif self._exhausted and not self._pending:
                return
            else:
                await self._wait()

    async def _open_block(self) -> None:
        block = await self._next()
        if block is None:
            self._exhausted = True
            return
        ident = self.next_block
        self.next_block += 1
        if self.on_block is not None:
            self.on_block(ident, block)
        specs = [dataclasses.replace(s, block=ident) for s in block.specs]
        if specs:
            self.issued_cells += len(specs)
            self._pending[ident] = {s.episode_id for s in specs}
            self._ready.extend(specs)

    async def _next(self) -> Block | None:
        if callable(self._blocks):
            return await self._blocks()
        return next(self._blocks, None)

    async def _wait(self) -> None:
        event = self._changed
        await event.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()
