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


class ShortTermMemory(Actor):
    """The tool agent's notes on the current subtask (failures, critiques); cleared on success."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    @on(StmNote)
    async def keep(self, msg: StmNote) -> None:
        self.notes = [*self.notes, msg.text][-KEEP:]

    @on(StmClear)
    async def clear(self, msg: StmClear) -> None:
        self.notes = []

    @on(StmRecall)
    async def recall(self, msg: StmRecall) -> MemoryContents:
        return MemoryContents(notes=list(self.notes))


class LongTermMemory(Actor):
    """The planner's memory of this task's failed attempts (whole trajectories)."""

    def __init__(self) -> None:
        self.trajectories: list[str] = []

    @on(LtmStore)
    async def keep(self, msg: LtmStore) -> None:
        self.trajectories = [*self.trajectories, msg.text][-KEEP:]

    @on(LtmRecall)
    async def recall(self, msg: LtmRecall) -> MemoryContents:
        return MemoryContents(notes=list(self.trajectories))
