"""A bounded FIFO mailbox: the one queue each actor reads from.

Why not ``anyio.create_memory_object_stream`` or ``asyncio.Queue``? Both cost
more than this on the two things the bus cares about. Speed: a memory stream's
``send`` always yields to the event loop, halving delivery throughput. Memory:
an idle episode has one mailbox per actor, and thousands of episodes sit idle
while their model calls are in flight; a queue with its deques and events costs
~2 KB, this one ~200 bytes. It suspends only when it must: ``put`` on a full
box waits for room (backpressure), ``get`` on an empty box waits for an item.

Waiting uses a future of the running event loop: the kernel runs on asyncio
(``docs/design-notes.md``), and a cancelled waiter behaves as in
``asyncio.Queue``: a sender woken for a free place and cancelled before it
took it hands the wake-up on to the next waiting sender.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar

T = TypeVar("T")


class MailboxClosed(Exception):
    """Raised by ``get`` once the mailbox is closed and drained."""


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class Mailbox(Generic[T]):
    """Bounded single-consumer queue with cooperative backpressure."""

    __slots__ = ("_closed", "_getter", "_items", "_loop", "_maxsize", "_putters")

    def __init__(self, maxsize: int = 64) -> None:
        if maxsize < 1:
            raise ValueError("mailbox size must be at least 1")
        # a list, not a deque: mailboxes are short, and an empty list is 10x smaller
        self._items: list[T] = []
        self._maxsize = maxsize
        self._getter: asyncio.Future[None] | None = None
        self._putters: list[asyncio.Future[None]] | None = None
        self._closed = False
        #: the loop of the first wait (a mailbox lives in one episode, on one loop)
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._items)

    @property
    def maxsize(self) -> int:
        return self._maxsize

    @property
    def reader_waiting(self) -> bool:
        """Whether the consumer is parked in ``get`` on an empty box."""
        return self._getter is not None and not self._getter.done()

    async def put(self, item: T) -> None:
        """Append ``item``, waiting while the box is full."""
        while len(self._items) >= self._maxsize:
            if self._closed:
                raise MailboxClosed
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            putters = self._putters
            if putters is None:
                putters = self._putters = []
            putters.append(fut)
            try:
                await fut
            except BaseException:
                if fut in putters:  # cancelled while waiting: just leave the line
                    putters.remove(fut)
                elif not fut.cancelled() and len(self._items) < self._maxsize:
                    # woken for a free place but cancelled before taking it: hand the
                    # wake-up on, or the next sender sleeps although there is room
                    self._wake_putter()
                raise
        if self._closed:
            raise MailboxClosed
        self._items.append(item)
        if self._getter is not None:
            _wake(self._getter)
            self._getter = None

    async def get(self) -> T:
        """Pop the oldest item, waiting while the box is empty."""
        while not self._items:
            if self._closed:
                raise MailboxClosed
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            fut: asyncio.Future[None] = loop.create_future()
            self._getter = fut
            try:
                await fut
            finally:
                if self._getter is fut:
                    self._getter = None
        return self.pop_nowait()

    def pop_nowait(self) -> T:
        """Pop the oldest item without waiting (``IndexError`` when empty).

        The consumer's fast path: while its mailbox holds mail it takes the
        next item without creating a coroutine per message.
        """
        item = self._items.pop(0)
        if self._putters:
            self._wake_putter()
        return item

    def _wake_putter(self) -> None:
        """Wake the first waiting sender, taking it out of the line (as ``asyncio.Queue`` does)."""
        putters = self._putters
        while putters:
            fut = putters.pop(0)
            if not fut.done():
                fut.set_result(None)
                return

    def close(self) -> None:
        """Wake every waiter; later ``put`` calls fail, ``get`` drains then fails."""
        self._closed = True
        _wake(self._getter)
        self._getter = None
        for fut in self._putters or ():
            _wake(fut)
        self._putters = None
