"""The simulator on an event loop of its own, in a thread (``SimConfig.thread``).

Why: at thousands of episodes the in-process simulator is the largest piece
of work on the run's event loop (the experts' prompt parsing, the serving
model's prefix bookkeeping, one timer per request), and every request whose
serving time ended in the same instant was answered in the same loop
iteration, so that iteration, and with it the lag of everything else on the
loop, grew with the number of episodes in flight. With ``thread`` on, the
engine (and the HTTP server, when there is one) runs on a second loop in a
daemon thread, and the answers come back to the caller's loop through
:class:`Handoff`, which hands them over in batches sized so that one
iteration's work stays near :data:`ITERATION_BUDGET_S` of the loop thread's
CPU. The GIL still serialises the Python work of both threads; what changes
is that the caller's loop is never held for the simulator's whole burst.

Determinism: requests reach the engine in the order the caller sent them
(one FIFO hop), so the fault draws and the prefix cache see the same order as
on one loop; the answers are a function of the prompt alone.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: the caller's loop-thread CPU one iteration may spend on woken answers
ITERATION_BUDGET_S = 0.004
#: answers handed over per iteration: first, fewest and most
FIRST_BATCH, MIN_BATCH, MAX_BATCH = 32, 4, 4096


class Handoff:
    """Callbacks from other threads, run on one event loop in batches.

    One ``call_soon_threadsafe`` (one wake-up of the loop) per batch, not per
    item. With ``budget_s`` the batch size adapts to what the items cost
    their loop afterwards: an answer wakes its waiting task, and the task's
    next step (building the next prompt, publishing, the next call) runs in
    the following iteration. The batch is halved when the loop thread spent
    more than the budget of CPU since the last batch, and grown by a quarter
    otherwise (thread CPU, so a machine that takes the core away does not
    shrink the batches). It never limits throughput while the loop is busy:
    batches follow each other every iteration until the queue is empty.
    Without a budget every queued item runs at once.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, budget_s: float | None = None) -> None:
        self.loop = loop
        self.budget_s = budget_s
        self.batch = FIRST_BATCH if budget_s is not None else MAX_BATCH
        self._queue: deque[tuple[Callable[[Any], None], Any]] = deque()
        self._lock = threading.Lock()
        self._armed = False
        self._last_cpu: float | None = None
        #: batches run and items handed over (for the benchmarks' figures)
        self.rounds = 0
        self.items = 0

    def put(self, callback: Callable[[Any], None], arg: Any) -> None:
        """Queue ``callback(arg)`` to run on the loop (callable from any thread)."""
        with self._lock:
            self._queue.append((callback, arg))
            if self._armed:
                return
            self._armed = True
        self.loop.call_soon_threadsafe(self._run)

    def _run(self) -> None:
        if self.budget_s is not None and self._last_cpu is not None:
            spent = time.thread_time() - self._last_cpu  # the last iteration's own work
            if spent > self.budget_s:
                self.batch = max(MIN_BATCH, self.batch // 2)
            else:
                self.batch = min(MAX_BATCH, self.batch + max(1, self.batch // 4))
        self.rounds += 1
        queue = self._queue
        for _ in range(self.batch if self.budget_s is not None else len(queue)):
            try:
                callback, arg = queue.popleft()
            except IndexError:
                break
            self.items += 1
            callback(arg)
        with self._lock:
            if not queue:
                self._armed = False
                self._last_cpu = None
                return
        self._last_cpu = time.thread_time()
        self.loop.call_soon(self._run)  # the next batch, one iteration later


class _Job(Generic[T]):
    """One call: made on the simulator's loop, answered on the caller's."""

    __slots__ = ("answers", "dropped", "task", "waiter", "work")

    def __init__(
        self,
        work: Callable[[], Coroutine[Any, Any, T]],
        waiter: asyncio.Future[T],
        answers: Handoff,
    ) -> None:
        self.work = work
        self.waiter = waiter
        self.answers = answers
        self.task: asyncio.Task[T] | None = None
        self.dropped = False

    def start(self) -> None:  # on the simulator's loop
        if self.dropped:
            return
        self.task = asyncio.get_running_loop().create_task(self.work())
        self.task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[T]) -> None:  # on the simulator's loop
        self.answers.put(_Job.settle, self)

    def settle(self) -> None:  # on the caller's loop
        waiter, task = self.waiter, self.task
        if task is None:
            return
        if task.cancelled():
            if not waiter.done():
                waiter.cancel()
            return
        exc = task.exception()  # read even when unused: no "never retrieved" warning
        if waiter.done():  # the caller gave up meanwhile
            return
        if exc is not None:
            waiter.set_exception(exc)
        else:
            waiter.set_result(task.result())

    def drop(self) -> None:  # on the simulator's loop: the caller was cancelled
        self.dropped = True
        if self.task is not None:
            self.task.cancel()


class SimThread:
    """A daemon thread running an asyncio loop; :meth:`call` runs work there."""

    def __init__(self, name: str = "agentbus-sim") -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._inbox = Handoff(self.loop)
        self._answers: dict[asyncio.AbstractEventLoop, Handoff] = {}

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def answers(self) -> Handoff:
        """The hand-over queue of the calling loop (one per loop that calls)."""
        loop = asyncio.get_running_loop()
        found = self._answers.get(loop)
        if found is None:
            found = self._answers[loop] = Handoff(loop, ITERATION_BUDGET_S)
        return found

    async def call(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """``await work()`` on the simulator's loop; cancelling the caller cancels it there."""
        waiter: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        job = _Job(work, waiter, self.answers())
        self._inbox.put(_Job.start, job)
        try:
            return await waiter
        except asyncio.CancelledError:
            self.loop.call_soon_threadsafe(job.drop)
            raise

    async def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """Set-up and tear-down work on the simulator's loop, answered at once."""

        async def wrapped() -> T:
            return await work()

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(wrapped(), self.loop))

    def stop(self) -> None:
        """Cancel what still runs there, stop the loop and wait for the thread."""
        if not self._thread.is_alive():
            return

        def shutdown() -> None:
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.call_soon(self.loop.stop)

        self.loop.call_soon_threadsafe(shutdown)
        self._thread.join(timeout=10.0)
