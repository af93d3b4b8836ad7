"""A bounded FIFO mailbox: the one queue each actor reads from.

Why not ``anyio.create_memory_object_stream``? Its ``send`` always yields to
the event loop, which halves delivery throughput on the bus's hot path. This
mailbox only suspends when it must: a ``put`` on a full box waits for room
(backpressure) and a ``get`` on an empty one waits for an item.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

import anyio

T = TypeVar("T")


class MailboxClosed(Exception):
    """Raised by ``get`` once the mailbox is closed and drained."""


class Mailbox(Generic[T]):
    """Bounded single-consumer queue with cooperative backpressure."""

    __slots__ = ("_closed", "_items", "_maxsize", "_not_empty", "_not_full")

    def __init__(self, maxsize: int = 64) -> None:
        if maxsize < 1:
            raise ValueError("mailbox size must be at least 1")
        self._items: deque[T] = deque()
        self._maxsize = maxsize
        self._not_empty: anyio.Event | None = None
        self._not_full: anyio.Event | None = None
        self._closed = False

    def __len__(self) -> int:
        return len(self._items)

    @property
    def maxsize(self) -> int:
        return self._maxsize

    async def put(self, item: T) -> None:
        """Append ``item``, waiting while the box is full."""
        while len(self._items) >= self._maxsize:
            if self._closed:
                raise MailboxClosed
            if self._not_full is None:
                self._not_full = anyio.Event()
            await self._not_full.wait()
        if self._closed:
            raise MailboxClosed
        self._items.append(item)
        ev = self._not_empty
        if ev is not None:
            self._not_empty = None
            ev.set()

    async def get(self) -> T:
        """Pop the oldest item, waiting while the box is empty."""
        while not self._items:
            if self._closed:
                raise MailboxClosed
            if self._not_empty is None:
                self._not_empty = anyio.Event()
            await self._not_empty.wait()
        item = self._items.popleft()
        ev = self._not_full
        if ev is not None:
            self._not_full = None
            ev.set()
        return item

    def close(self) -> None:
        """Wake every waiter; later ``put`` calls fail, ``get`` drains then fails."""
        self._closed = True
        for ev in (self._not_empty, self._not_full):
            if ev is not None:
                ev.set()
        self._not_empty = self._not_full = None
