"""MIRROR's own bus messages: plans, critiques, memory and attempt hand-offs.

Requests to a reflection component (``*Review``, ``*Recall``) are only sent
when some actor handles them (``bus.handles``): a component that is off is
skipped, never waited for.
"""

from __future__ import annotations

from pydantic import Field

from agentbus import Message


class PlanReady(Message):
    """The planner's (possibly revised) decomposition for one attempt."""

    attempt: int
    text: str
    subtasks: list[str] = Field(default_factory=list)


class Review(Message):
    """Ask a critic to score a draft; the reply is a :class:`Critique`."""

    draft: str
    context: str = ""


class PlanReview(Review):
    pass


class CallReview(Review):
    pass


class AnswerReview(Review):
    pass


class Critique(Message):
    """A critic's score (1-10; None when it gave none) and its reasons."""

    score: float | None
    text: str


class MemoryNote(Message):
    """Something for a memory to keep."""

    text: str


class StmNote(MemoryNote):
    pass


class StmClear(Message):
    """The current subtask succeeded: short-term memory starts afresh."""


class LtmStore(MemoryNote):
    pass


class Recall(Message):
    """Ask a memory for what it holds; the reply is a :class:`MemoryContents`."""


class StmRecall(Recall):
    pass


class LtmRecall(Recall):
    pass


class MemoryContents(Message):
    notes: list[str] = Field(default_factory=list)


class AttemptDone(Message):
    """The tool agent finished an attempt's subtasks (``complete``: every one succeeded)."""

    attempt: int
    plan: str
    history: str
    complete: bool


class AttemptFailed(Message):
    """An attempt to remember and replan from: its whole trajectory and why it failed."""

    attempt: int
    trajectory: str
    reason: str
