"""The cyclic garbage collector during a run: full collections kept off the loop's back.

CPython's collector stops the whole process while it walks a generation, and
a full (generation 2) collection walks every container object alive. At
thousands of episodes in flight that is several hundred thousand objects
(about 400 per in-flight PRAF episode, besides the imported libraries: sympy
alone brings a large share): measured 250-570 ms per full collection at 2,000
episodes on the shared 2-core machine, against 20-30 ms for a generation-1
one. With CPython's defaults a full collection comes after every tenth
generation-1 collection, about once every 100 beats of a 10 ms heartbeat, so
full collections alone set the lag's 99th percentile.

CPython decides when to collect by counting container allocations minus
deallocations, and any deallocation counts, old objects' too. In a steady
run old objects (finished episodes) die about as fast as young ones are
born, so the count hovers near zero while the youngest generation grows to
tens of thousands of objects: measured 38,000-72,000 objects in single
generation-0 collections and 90,000 in a generation-1 one, 40-150 ms each,
at 1,500 episodes in flight. So the run paces the collector by time instead.

During :meth:`~agentbus.executors.runtime.Runtime.run`, :func:`steady_gc`:

* freezes what is alive when the run starts (``gc.freeze``: the imported
  modules, the plan, the specs), so no collection walks it again until the
  run ends;
* on an asyncio loop, collects the youngest generation every
  :data:`TICK_S` (what a tick's worth of work left alive, a few milliseconds
  of walking), the next one every :data:`GEN1_EVERY` ticks, and everything
  every :data:`RUN_THRESHOLD2` generation-1 collections (about every 20 s,
  where the default's count would come ten times as often), so no single
  collection walks much more than the run allocated since the last one;
* every :data:`TRIM_EVERY` ticks (5 s) hands the C allocator's free pages
  back to the system (glibc's ``malloc_trim``; elsewhere nothing). A run frees
  as much as it allocates once warm (a 512-episode soak's Python objects grew
  0.5 MB over its second half, tracemalloc), but glibc kept the pages of the
  freed event lines, prompts and answer bodies, so RSS only ever rose: +7%
  over that second half without the trim, -3% with it (0.2-7 ms a trim);
* raises CPython's own generation-2 threshold to the same figure. A finished
  episode leaves no cyclic garbage (agentbus/core/episode.py drops its links),
  so what a full collection would find is small: 80 objects in a whole
  2,000-episode run of ``benchmarks/scale.py``. Reference counting frees
  everything else at once, as before.

Both are undone when the last concurrent run ends. A process that froze its
heap itself (``gc.get_freeze_count() > 0``, e.g. before forking workers)
keeps its own arrangement: only the threshold changes then.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: generation-1 collections per full collection during a run (CPython's default: 10)
RUN_THRESHOLD2 = 100
#: seconds between paced collections of the youngest generation
TICK_S = 0.02
#: ticks per generation-1 collection (CPython's generation-1 threshold)
GEN1_EVERY = 10
#: ticks between hand-backs of the allocator's free pages (5 s)
TRIM_EVERY = 250


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``, or None where the C library has none (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


_TRIM = _malloc_trim()


class _Pacer:
    """A timer chain on the run's loop (no task): one small collection per tick."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.ticks = 0
        self.handle = loop.call_later(TICK_S, self.tick)

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks % (GEN1_EVERY * RUN_THRESHOLD2) == 0:
            gc.collect(2)
        elif self.ticks % GEN1_EVERY == 0:
            gc.collect(1)
        elif self.ticks % TRIM_EVERY == TRIM_EVERY // 2 and _TRIM is not None:
            _TRIM()  # between collections, never on the same tick as one
        else:
            gc.collect(0)
        self.handle = self.loop.call_later(TICK_S, self.tick)

    def cancel(self) -> None:
        self.handle.cancel()


_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None
_froze = False
_pacer: _Pacer | None = None


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # another backend (trio), or no loop: CPython's own pacing
        return None


@contextmanager
def steady_gc() -> Iterator[None]:
    """Inside the block, the collector leaves the run's starting heap alone (see module)."""
    global _depth, _saved, _froze, _pacer
    with _lock:
        _depth += 1
        if _depth == 1:
            _saved = gc.get_threshold()
            g0, g1, g2 = _saved
            gc.set_threshold(g0, g1, max(g2, RUN_THRESHOLD2))
            _froze = gc.get_freeze_count() == 0
            if _froze:
                gc.freeze()
            loop = _running_asyncio_loop()
            _pacer = _Pacer(loop) if loop is not None else None
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _saved is not None:
                    gc.set_threshold(*_saved)
                if _froze:
                    gc.unfreeze()
                if _pacer is not None:
                    _pacer.cancel()
                _saved, _froze, _pacer = None, False, None
