"""Admit episode records into the live estimate in an order outcomes cannot bend.

Episodes end in order of their length, and length depends on success
(failures run to the step limit), so "everything that has ended so far" over-
represents quick successes. The fix is to decide *which* data enters the
estimate before any of it is seen: the scheduler declares blocks (usually one
task with every coalition of it) in the order it issues them, and a block
enters only once every one of its cells has settled (a counting record, or
given up after its retries), and only after every block declared before it.
The estimate then always covers the first K declared blocks in full, a set
fixed by the schedule, whatever the outcomes were.

Records of cells no block declared (a resumed adaptive run's earlier
episodes, a log replayed for a report) pass straight through.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentbus.core.record import EpisodeRecord


@dataclass
class _Block:
    ident: int
    cells: tuple[str, ...]
    task: str
    pending: set[str]
    records: dict[str, EpisodeRecord] = field(default_factory=dict)


class BlockAdmission:
    """In-order admission of complete blocks; see the module docstring."""

    def __init__(self) -> None:
        self._queue: deque[_Block] = deque()
        self._open: dict[str, _Block] = {}  # cell -> its block, until admitted
        self._admitted_cells: set[str] = set()
        self._early: dict[str, EpisodeRecord] = {}  # counted before their block was declared
        self.admitted_blocks = 0
        self.declared_blocks = 0
        self.admitted_episodes = 0

    def expect(self, ident: int, cells: Iterable[str], task: str = "") -> list[EpisodeRecord]:
        """Declare the next block; returns records it lets in (if already complete)."""
        block = _Block(ident, tuple(cells), task, set())
        for cell in block.cells:
            early = self._early.pop(cell, None)
            if early is not None:
                block.records[cell] = early
            else:
                block.pending.add(cell)
            self._open[cell] = block
        self._queue.append(block)
        self.declared_blocks += 1
        return self._drain()

    def record(self, record: EpisodeRecord) -> list[EpisodeRecord]:
        """A counting record arrived; returns the records admitted by it (maybe none)."""
        cell = record.episode_id
        block = self._open.get(cell)
        if block is None:
            if cell in self._admitted_cells:
                return [record]  # a later attempt of an admitted cell: it replaces
            self._early[cell] = record
            return []
        block.records[cell] = record
        block.pending.discard(cell)
        return self._drain()

    def release_unplanned(self) -> list[EpisodeRecord]:
        """Records whose cells no block declared (they pass straight through)."""
        early = list(self._early.values())
        self._early.clear()
        for record in early:
            self._admitted_cells.add(record.episode_id)
        self.admitted_episodes += len(early)
        return early

    def give_up(self, cell: str) -> list[EpisodeRecord]:
        """A cell will not be run again (its retries are spent): stop waiting for it."""
        block = self._open.get(cell)
        if block is None:
            return []
        block.pending.discard(cell)
        return self._drain()

    def _drain(self) -> list[EpisodeRecord]:
        out: list[EpisodeRecord] = []
        while self._queue and not self._queue[0].pending:
            block = self._queue.popleft()
            for cell in block.cells:
                self._open.pop(cell, None)
                self._admitted_cells.add(cell)
            out.extend(block.records.values())
            self.admitted_blocks += 1
        self.admitted_episodes += len(out)
        return out

    def waiting_for(self) -> str | None:
        """Why the next block is not in yet (None when nothing is waiting)."""
        if not self._queue:
            return None
        head = self._queue[0]
        done = len(head.cells) - len(head.pending)
        what = f"task {head.task}" if head.task else f"block {head.ident}"
        return f"{done} of {len(head.cells)} episodes of {what} have ended"
