"""A small pool of worker processes for sympy, with hard time limits.

A thread cannot be stopped, and one expression (``expand((a+b+c+d)^40)``)
can keep sympy busy for minutes; so every sympy call of the math tools runs
in a worker process, and a call that overruns its limit kills its worker
(the next call starts a fresh one). Workers are forked from a forkserver that
has already imported sympy, so a replacement costs milliseconds, not the
second a cold ``import sympy`` takes.

The pool is thread-safe and loop-agnostic: the async :meth:`SympyPool.run`
waits in a worker thread, so it works from any event loop (each test gets its
own) and a cancelled caller never leaves a worker half-used.
"""

from __future__ import annotations

import atexit
import functools
import multiprocessing
import os
import queue
import threading
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import anyio.to_thread

from environments.math.safeparse import CalcError

#: bytes of address space a worker may use (a memory bomb fails, not the host)
WORKER_MEMORY = 2 << 30


class CalcTimeout(CalcError):
    """The computation overran its time limit and its worker was stopped."""


def _serve(conn: Connection) -> None:
    """Worker main loop: (op, args) in, ("ok", value) or ("error", reason) out."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
    except (ImportError, ValueError, OSError):
        pass
    from environments.math.ops import OPS

    ops = OPS

    while True:
        try:
            op, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[str, Any] = ("ok", ops[op](*args))
        except CalcError as exc:
            reply = ("error", str(exc))
        except MemoryError:
            reply = ("error", "the computation ran out of memory")
        except RecursionError:
            reply = ("error", "the expression is nested too deeply")
        except Exception as exc:
            reply = ("error", f"could not evaluate: {type(exc).__name__}: {exc}"[:300])
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return


class _Worker:
    __slots__ = ("conn", "process")

    def __init__(self, ctx: Any) -> None:
        parent, child = ctx.Pipe()
        self.conn: Connection = parent
        self.process: BaseProcess = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.process.start()
        child.close()

    def stop(self) -> None:
        try:
            self.process.kill()
            self.process.join(timeout=2)
        except (OSError, ValueError, AssertionError):
            pass
        self.conn.close()


class SympyPool:
    """Up to ``size`` worker processes, started on demand."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size or max(1, min(4, os.cpu_count() or 1))
        self._slots = threading.BoundedSemaphore(self.size)
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._ctx: Any = None
        self.killed = 0

    def _context(self) -> Any:
        with self._lock:
            if self._ctx is None:
                ctx: Any
                try:
                    ctx = multiprocessing.get_context("forkserver")
                    ctx.set_forkserver_preload(["environments.math.ops"])
                except ValueError:  # no forkserver on this platform
                    ctx = multiprocessing.get_context("spawn")
                self._ctx = ctx
            return self._ctx

    def _take(self) -> _Worker:
        try:
            worker = self._idle.get_nowait()
            if worker.process.is_alive():
                return worker
            self._drop(worker)
        except queue.Empty:
            pass
        worker = _Worker(self._context())
        with self._lock:
            self._all.add(worker)
        return worker

    def _drop(self, worker: _Worker) -> None:
        worker.stop()
        with self._lock:
            self._all.discard(worker)

    def call(self, op: str, args: tuple[Any, ...], timeout: float) -> Any:
        """Run ``op(*args)`` in a worker (blocking); CalcError on refusal or overrun."""
        with self._slots:
            worker = self._take()
            try:
                worker.conn.send((op, args))
                if not worker.conn.poll(timeout):
                    self.killed += 1
                    self._drop(worker)
                    raise CalcTimeout(
                        f"the computation took longer than {timeout:g}s and was stopped"
                    )
                status, value = worker.conn.recv()
            except (EOFError, OSError, BrokenPipeError) as exc:
                self._drop(worker)
                raise CalcError(
                    f"the math worker failed ({type(exc).__name__}); try again"
                ) from None
            self._idle.put(worker)
        if status == "error":
            raise CalcError(value)
        return value

    async def run(self, op: str, *args: Any, timeout: float = 5.0) -> Any:
        """Async :meth:`call`: waits in a thread, never blocks the event loop."""
        return await anyio.to_thread.run_sync(
            functools.partial(self.call, op, args, timeout), abandon_on_cancel=True
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
