"""The kernel's two asyncio helpers: a movable deadline and a shielded cleanup.

The kernel runs on asyncio alone (``docs/design-notes.md`` says why): one
set of cancellation rules for a reader to hold. asyncio gives everything an
episode needs except these two pieces, which anyio's cancel scopes used to
give:

- :class:`MovableDeadline`: the episode's timeout is moved out by the time
  its calls queue for a model slot (:class:`agentbus.llm.queueing.QueueClock`
  sets ``deadline``), so it wraps an ``asyncio.timeout`` with a settable
  ``deadline`` in the loop's clock, ``math.inf`` for none.
- :func:`shielded`: ``on_stop`` and ``close`` must run to their end even when
  the episode is being cancelled (a sandbox left running outlives the run).
  The cleanup runs as a task the caller waits for; a cancellation that
  arrives meanwhile is held and raised once the cleanup is done.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class MovableDeadline:
    """A settable ``deadline`` (loop time, ``math.inf`` = none) driving an ``asyncio.Timeout``."""

    __slots__ = ("_timeout",)

    def __init__(self, timeout: asyncio.Timeout) -> None:
        self._timeout = timeout

    @property
    def deadline(self) -> float:
        when = self._timeout.when()
        return math.inf if when is None else when

    @deadline.setter
    def deadline(self, value: float) -> None:
        self._timeout.reschedule(None if math.isinf(value) else value)


async def shielded(cleanup: Coroutine[Any, Any, T]) -> T:
    """Await ``cleanup`` to its end even if the caller is cancelled meanwhile.

    The cleanup task is owned here: this function returns only once it is
    done. A cancellation of the caller is re-raised afterwards, so the
    caller's structured cancellation still goes through (anyio, which the
    executors use, re-delivers it until it is taken).
    """
    task = asyncio.get_running_loop().create_task(cleanup)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            if task.cancelled():
                raise
            cancelled = exc  # held until the cleanup is done
    result = task.result()
    if cancelled is not None:
        raise cancelled
    return result
