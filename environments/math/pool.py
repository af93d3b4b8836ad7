"""A small pool of worker processes for sympy, with hard time limits.

A thread cannot be stopped, and one expression (``expand((a+b+c+d)^40)``)
can keep sympy busy for minutes; so every sympy call of the math tools runs
in a worker process (``python -m environments.math.worker``), and a call
that overruns its limit kills its worker (the next call starts a fresh one).

The pool is thread-safe and loop-agnostic: the async :meth:`SympyPool.run`
waits in a worker thread, so it works from any event loop (each test gets its
own) and a cancelled caller never leaves a worker half-used.

Results are remembered (a bounded LRU per pool): the operations are pure, and
the coalitions of one run check the same answers and evaluate the same
expressions over and over (in a four-slot math run about nine calls in ten
repeat an earlier one). A refusal (``CalcError``) is remembered like a value;
a timeout or a failed worker is not, since it says something about the load,
not about the expression.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import pickle
import queue
import select
import subprocess
import sys
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from environments.math.safeparse import CalcError
from environments.math.worker import read_frame, write_frame

#: the directory holding the ``environments`` package, for the workers' import path
_ROOT = str(Path(__file__).resolve().parents[2])
#: how long a fresh worker may take to import sympy and say it is ready
START_TIMEOUT = 60.0
#: results remembered per pool (each a short string or bool and its key)
MEMO_ENTRIES = 8192

_Outcome = tuple[str, Any]  # ("ok", value) or ("error", message)


class CalcTimeout(CalcError):
    """The computation overran its time limit and its worker was stopped."""


class _Worker:
    __slots__ = ("process",)

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "environments.math.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        try:
            ready = self.wait(START_TIMEOUT) and self.receive()[0] == "ready"
        except (EOFError, OSError, ValueError, pickle.UnpicklingError):
            ready = False
        if not ready:
            self.stop()
            raise CalcError("the math worker did not start")

    def send(self, value: Any) -> None:
        assert self.process.stdin is not None
        write_frame(self.process.stdin, value)

    def wait(self, timeout: float) -> bool:
        """Whether a reply is readable within ``timeout`` seconds."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        return bool(ready)

    def receive(self) -> Any:
        assert self.process.stdout is not None
        return read_frame(self.process.stdout)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        try:
            self.process.kill()
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


class SympyPool:
    """Up to ``size`` worker processes, started on demand."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size or max(1, min(8, os.cpu_count() or 1))
        self._slots = threading.BoundedSemaphore(self.size)
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter]
        self._limiters = weakref.WeakKeyDictionary()
        self.killed = 0
        self._memo: OrderedDict[tuple[str, tuple[Any, ...]], _Outcome] = OrderedDict()
        self.memo_hits = 0
        #: per event loop: calls on their way to a worker, so that an identical call
        #: made meanwhile (the coalitions of one task ask the same) waits for it;
        #: ``coalesced`` counts those waiters (their answer also counts as a memo hit)
        self._pending: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, tuple[Any, ...]], anyio.Event]
        ] = weakref.WeakKeyDictionary()
        self.coalesced = 0

    def _recall(self, key: tuple[str, tuple[Any, ...]]) -> _Outcome | None:
        with self._lock:
            outcome = self._memo.get(key)
            if outcome is not None:
                self._memo.move_to_end(key)
                self.memo_hits += 1
            return outcome

    def _remember(self, key: tuple[str, tuple[Any, ...]], outcome: _Outcome) -> None:
        with self._lock:
            self._memo[key] = outcome
            while len(self._memo) > MEMO_ENTRIES:
                self._memo.popitem(last=False)

    @staticmethod
    def _unwrap(outcome: _Outcome) -> Any:
        status, value = outcome
        if status == "error":
            raise CalcError(value)
        return value

    def _take(self) -> _Worker:
        try:
            worker = self._idle.get_nowait()
            if worker.alive():
                return worker
            self._drop(worker)
        except queue.Empty:
            pass
        worker = _Worker()
        with self._lock:
            self._all.add(worker)
        return worker

    def _drop(self, worker: _Worker) -> None:
        worker.stop()
        with self._lock:
            self._all.discard(worker)

    def call(self, op: str, args: tuple[Any, ...], timeout: float) -> Any:
        """Run ``op(*args)`` in a worker (blocking); CalcError on refusal or overrun."""
        key = (op, args)
        known = self._recall(key)
        if known is not None:
            return self._unwrap(known)
        with self._slots:
            worker = self._take()
            try:
                worker.send((op, args))
                if not worker.wait(timeout):
                    self.killed += 1
                    self._drop(worker)
                    raise CalcTimeout(
                        f"the computation took longer than {timeout:g}s and was stopped"
                    )
                status, value = worker.receive()
            except (EOFError, OSError, BrokenPipeError) as exc:
                self._drop(worker)
                raise CalcError(
                    f"the math worker failed ({type(exc).__name__}); try again"
                ) from None
            self._idle.put(worker)
        outcome: _Outcome = (str(status), value)
        self._remember(key, outcome)
        return self._unwrap(outcome)

    def _limiter(self) -> anyio.CapacityLimiter:
        """This event loop's limiter: callers beyond ``size`` wait in the loop, not in
        threads, so a burst of calculations never ties up anyio's shared thread pool."""
        loop = asyncio.get_running_loop()
        limiter = self._limiters.get(loop)
        if limiter is None:
            limiter = self._limiters[loop] = anyio.CapacityLimiter(self.size)
        return limiter

    async def run(self, op: str, *args: Any, timeout: float = 5.0) -> Any:
        """Async :meth:`call`: waits in a thread, never blocks the event loop.

        An identical call already on its way to a worker is waited for rather
        than sent again; if it ends without a result to share (a timeout, which
        is never remembered, or its caller was cancelled) this one runs itself.
        """
        key = (op, args)
        known = self._recall(key)
        if known is not None:  # no thread hop for a result already known
            return self._unwrap(known)
        pending = self._pending.setdefault(asyncio.get_running_loop(), {})
        first = pending.get(key)
        if first is not None:
            await first.wait()
            known = self._recall(key)
            if known is not None:
                self.coalesced += 1
                return self._unwrap(known)
            return await self._in_thread(op, args, timeout)
        mine = pending[key] = anyio.Event()
        try:
            return await self._in_thread(op, args, timeout)
        finally:
            if pending.get(key) is mine:
                del pending[key]
            mine.set()

    async def _in_thread(self, op: str, args: tuple[Any, ...], timeout: float) -> Any:
        return await anyio.to_thread.run_sync(
            functools.partial(self.call, op, args, timeout),
            abandon_on_cancel=True,
            limiter=self._limiter(),
        )

    def close(self) -> None:
        with self._lock:
            workers, self._all = list(self._all), set()
        for w in workers:
            w.stop()


_default: SympyPool | None = None
_default_lock = threading.Lock()


def default_pool() -> SympyPool:
    """The process-wide pool (like anyio's default thread limiter: one per process)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SympyPool()
            atexit.register(_default.close)
        return _default


__all__ = ["CalcTimeout", "SympyPool", "default_pool"]
