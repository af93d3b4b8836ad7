"""Inter-reflection: MIRROR's two memories, each an actor in its own slot.

Both live as long as their episode, which is one task: long-term memory is
kept per task and can never leak into another task's episode.
"""

from __future__ import annotations

from agentbus import Actor, on
from modules.mirror.messages import (
    LtmRecall,
    LtmStore,
    MemoryContents,
    StmClear,
    StmNote,
    StmRecall,
)

#: the most notes a memory shows (the oldest go first)
KEEP = 6


class Memory(Actor):
    """Notes in the order they came; the newest :data:`KEEP` are kept and shown."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def remember(self, text: str) -> None:
        self.notes = [*self.notes, text][-KEEP:]

    def contents(self) -> MemoryContents:
        return MemoryContents(notes=list(self.notes))


class ShortTermMemory(Memory):
    """The tool agent's notes on the current subtask (failures, critiques); cleared on success."""

    @on(StmNote)
    async def keep(self, msg: StmNote) -> None:
        self.remember(msg.text)

    @on(StmClear)
    async def clear(self, msg: StmClear) -> None:
        self.notes = []

    @on(StmRecall)
    async def recall(self, msg: StmRecall) -> MemoryContents:
        return self.contents()


class LongTermMemory(Memory):
    """The planner's memory of this task's failed attempts (whole trajectories)."""

    @on(LtmStore)
    async def keep(self, msg: LtmStore) -> None:
        self.remember(msg.text)

    @on(LtmRecall)
    async def recall(self, msg: LtmRecall) -> MemoryContents:
        return self.contents()
