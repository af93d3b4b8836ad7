"""Ctrl-C (and SIGTERM) as a cancel scope: the first one stops the work, reliably.

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
cancels the scope on the first SIGINT or SIGTERM. SIGTERM is what a job
scheduler, ``timeout``, ``docker stop`` or systemd send: it used to end a run
without a word, so it is handled exactly like Ctrl-C (finished episodes are
saved and the CLI says how to resume). The signal handlers are removed as
soon as that happens, so a second signal during the shutdown has its default
effect again (``KeyboardInterrupt``, or termination), for whoever wants out
at once.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

import anyio
import anyio.from_thread
from anyio.lowlevel import current_token

T = TypeVar("T")


@dataclass
class Interruptible(Generic[T]):
    """What :func:`until_interrupted` ended with: the result, or that Ctrl-C stopped it."""

    result: T | None = None
    interrupted: bool = False
    #: the signal that stopped the work (``SIGINT`` or ``SIGTERM``), if one did
    signal: signal.Signals | None = None


async def until_interrupted(work: Callable[[], Awaitable[T]]) -> Interruptible[T]:
    """Await ``work()``; on the first SIGINT or SIGTERM cancel it and report ``interrupted``.

    An exception from ``work()`` comes out unchanged (not wrapped in this
    task group's exception group), so callers catch what they caught before.
    """
    outcome: Interruptible[T] = Interruptible()
    failed: Exception | None = None
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for received in signals:
                    outcome.interrupted = True
                    outcome.signal = signal.Signals(received)
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


async def in_daemon_thread(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in a daemon thread that a cancellation abandons instead of awaiting.

    ``anyio.to_thread.run_sync`` waits for the thread even when cancelled, so
    Ctrl-C did nothing while a long synchronous step ran (generating 100,000
    tasks takes minutes). Here the caller returns at once; the thread, being a
    daemon, ends with the process. Only for work whose half-done state is
    harmless to drop (it must not be the only writer of a file in mid-write).
    """
    token = current_token()
    done = anyio.Event()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = func(*args)
        except BaseException as exc:  # handed to the awaiting task as it is
            box["error"] = exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=target, name=f"agentbus {func.__name__}", daemon=True).start()
    await done.wait()
    if "error" in box:
        raise box["error"]
    return cast(T, box["result"])


def is_interrupt(exc: BaseException) -> bool:
    """A ``KeyboardInterrupt``, bare or inside task-group exception groups.

    A second Ctrl-C lands wherever the main thread is, often inside a task,
    and anyio then raises it wrapped in a ``BaseExceptionGroup``.
    """
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(KeyboardInterrupt) is not None
    return isinstance(exc, KeyboardInterrupt)


__all__ = ["Interruptible", "in_daemon_thread", "is_interrupt", "until_interrupted"]
