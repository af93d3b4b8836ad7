"""Time an episode spends waiting for a model slot, kept off its timeout.

An episode's timeout is there to stop an agent that loops or a tool that
hangs, not to punish it for the run's own traffic: with one server slot and
four episodes in flight, each episode waits for the other three at every
call, and a 600 s timeout that counts that wait killed healthy episodes (and
redid them, which queued the rest longer still). So the LLM layer reports
every wait for a model slot (the endpoint's concurrency limit, its RPM/TPM
buckets, pacing from rate-limit headers) to the episode's :class:`QueueClock`,
found through a context variable, and the clock moves the episode's deadline
out by the time spent waiting. A wait inside the server's own queue cannot
be seen from here: give the endpoint a ``max_concurrency`` equal to the
server's slots and the queue forms here, where it is measured
(docs/real-models.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Protocol


class Deadline(Protocol):
    """What the clock moves: a deadline in the event loop's time (``math.inf`` = none).

    An anyio cancel scope is one (the gateway's); the episode's is
    :class:`agentbus.core.aio.MovableDeadline` over an ``asyncio.timeout``.
    """

    deadline: float


class QueueClock:
    """Waits for model slots of one episode, and the deadline they push out.

    Overlapping waits (two actors of one episode queued at once) count once:
    the clock measures the time during which at least one call was waiting.
    While a call waits the deadline is lifted; when the last wait ends it is
    set again to the start plus the timeout plus everything waited so far.
    """

    __slots__ = ("_base", "_scope", "_since", "_waiting", "waited_s")

    def __init__(self) -> None:
        self.waited_s = 0.0
        self._waiting = 0
        self._since = 0.0
        self._scope: Deadline | None = None
        self._base = math.inf

    def bind(self, scope: Deadline, deadline: float) -> None:
        """Drive ``scope``'s deadline: ``deadline`` (anyio's clock) plus the time waited."""
        self._scope = scope
        self._base = deadline
        scope.deadline = deadline + self.waited_s

    def enter(self) -> None:
        if self._waiting == 0:
            self._since = time.monotonic()
            if self._scope is not None:
                self._scope.deadline = math.inf
        self._waiting += 1

    def leave(self) -> None:
        self._waiting -= 1
        if self._waiting == 0:
            self.waited_s += time.monotonic() - self._since
            if self._scope is not None:
                self._scope.deadline = self._base + self.waited_s


_CLOCK: ContextVar[QueueClock | None] = ContextVar("agentbus_queue_clock", default=None)


def start_clock() -> tuple[QueueClock, Token[QueueClock | None]]:
    """A fresh clock for the calling task and the tasks it starts (reset with the token)."""
    clock = QueueClock()
    return clock, _CLOCK.set(clock)


def stop_clock(token: Token[QueueClock | None]) -> None:
    _CLOCK.reset(token)


def episode_clock() -> QueueClock | None:
    """The clock of the episode the calling task belongs to (None outside an episode)."""
    return _CLOCK.get()


@contextmanager
def using_clock(clock: QueueClock | None) -> Iterator[None]:
    """Report the waits of the code inside to ``clock`` (a gateway call, made for an episode).

    A user's agent calls the gateway from outside the episode's task, so the
    gateway's handler takes the episode's clock explicitly.
    """
    token = _CLOCK.set(clock)
    try:
        yield
    finally:
        _CLOCK.reset(token)


class FanClock(QueueClock):
    """A clock that passes every wait on to several (the episode's and its agent's)."""

    __slots__ = ("targets",)

    def __init__(self, *targets: QueueClock) -> None:
        super().__init__()
        self.targets = targets

    def enter(self) -> None:
        super().enter()
        for target in self.targets:
            target.enter()

    def leave(self) -> None:
        super().leave()
        for target in self.targets:
            target.leave()


@contextmanager
def waiting_for_slot() -> Iterator[None]:
    """Mark the time inside as spent waiting for a model slot (no-op outside an episode)."""
    clock = _CLOCK.get()
    if clock is None:
        yield
        return
    clock.enter()
    try:
        yield
    finally:
        clock.leave()


__all__ = [
    "FanClock",
    "QueueClock",
    "episode_clock",
    "start_clock",
    "stop_clock",
    "using_clock",
    "waiting_for_slot",
]
