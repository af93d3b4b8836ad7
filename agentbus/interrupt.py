"""Ctrl-C as a cancel scope: the first SIGINT stops the work, reliably.

``asyncio.run`` (and ``anyio.run`` on asyncio) turns the first Ctrl-C into a
single native ``Task.cancel()`` of the main task. That request is delivered
once, at whatever the main task is awaiting at that moment, and code that
handles cancellation on the way out (a shielded cleanup, a cancel scope of
its own ending in the same loop iteration) can absorb it: the run then went
on to the end and exited 0, or a server kept serving (seen under load in
CI). An anyio cancel scope is level-triggered instead: once cancelled, every
checkpoint inside it raises until the scope is left, so nothing can absorb
it.

:func:`until_interrupted` runs a coroutine function inside such a scope and
cancels the scope on the first SIGINT. The signal handler is removed as soon
as that happens, so a second Ctrl-C during the shutdown is the default
``KeyboardInterrupt`` again, for whoever wants out at once.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio

T = TypeVar("T")


@dataclass
class Interruptible(Generic[T]):
    """What :func:`until_interrupted` ended with: the result, or that Ctrl-C stopped it."""

    result: T | None = None
    interrupted: bool = False


async def until_interrupted(work: Callable[[], Awaitable[T]]) -> Interruptible[T]:
    """Await ``work()``; on the first SIGINT cancel it and report ``interrupted``.

    An exception from ``work()`` comes out unchanged (not wrapped in this
    task group's exception group), so callers catch what they caught before.
    """
    outcome: Interruptible[T] = Interruptible()
    failed: Exception | None = None
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGINT) as signals:
                async for _ in signals:
                    outcome.interrupted = True
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(watch)
        try:
            outcome.result = await work()
        except Exception as exc:  # raised as it is below, not wrapped in the group's
            failed = exc
        tg.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return outcome


def is_interrupt(exc: BaseException) -> bool:
    """A ``KeyboardInterrupt``, bare or inside task-group exception groups.

    A second Ctrl-C lands wherever the main thread is, often inside a task,
    and anyio then raises it wrapped in a ``BaseExceptionGroup``.
    """
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(KeyboardInterrupt) is not None
    return isinstance(exc, KeyboardInterrupt)


__all__ = ["Interruptible", "is_interrupt", "until_interrupted"]
