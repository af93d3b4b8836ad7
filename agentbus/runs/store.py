"""The run directory: manifest, append-only event log, resume index, results.

A run directory is the single source of truth of a run. ``events.jsonl`` holds
one orjson line per event, in the order they happened, across every process
that worked on the run (a resumed run appends to the same file). Each stored
line gets ``seq`` = its 1-based position in the file, so ``seq`` is global and
gap-free across resumes, and a reader that has seen ``seq`` N asks for
everything after offset N.

Crash safety without fsync: every ``episode.ended`` (and ``run.*``) line is
handed to the operating system (``write`` + ``flush``) before the next event is
taken, so a ``kill -9`` of the process never loses a finished outcome that was
written, and one that was not written is simply run again on resume. A power
cut can leave a truncated or garbled last line: :meth:`RunStore.open` cuts it
off with a warning. The resume index counts each episode id once, so nothing
is counted twice either, even if an episode ended twice in the log (an infra
error retried later, say).

Writes go to the page cache on the event loop: that costs microseconds, much
less than a thread hop per line. Reading old lines back (replay for a late
subscriber) goes to a worker thread.
"""

from __future__ import annotations

import contextlib
import sys
from array import array
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import orjson
import structlog

from agentbus.core.errors import UserError
from agentbus.core.events import (
    EPISODE_ENDED,
    RUN_FINISHED,
    RUN_STARTED,
    SCHEMA_VERSION,
    Event,
    EventHub,
)
from agentbus.core.logs import scrubber
from agentbus.core.record import EpisodeRecord, payload_counts
from agentbus.runs.manifest import MANIFEST, _dumps_pretty, open_manifest
from agentbus.runs.run_files import (
    _OPTS,
    EVENTS,
    LOCK,
    TEXT_SUFFIXES,
    _jsonable,
    _parse,
    atomic_write,
    load_log,
    lock_run_dir,
    safe_join,
)

log = structlog.get_logger(__name__)

#: event types whose line is handed to the OS before the writer goes on
FLUSH_TYPES = frozenset({EPISODE_ENDED, RUN_STARTED, RUN_FINISHED})


class RunStore:
    """One run directory, open for appending; see the module docstring."""

    #: recent lines kept in memory so live subscribers never touch the disk
    #: (bounded by count and by bytes: traced episodes make long lines)
    RING = 4096
    RING_BYTES = 8 << 20

    def __init__(self, run_dir: Path, manifest: dict[str, Any]) -> None:
        """Use :meth:`open`; this only sets the fields."""
        self.run_dir = run_dir
        self.manifest = manifest
        self.events_path = run_dir / EVENTS
        self.resumed = False
        self.repaired = 0
        self._fh: IO[bytes] | None = None
        self._lock_fh: IO[bytes] | None = None
        #: every line and file goes through it: keys echoed by a provider stay out
        self._scrub = scrubber()
        self._pos = array("q", [0])  # byte position of line i; last item = file size
        self._ring: deque[bytes] = deque()
        self._ring_bytes = 0
        self._completed: set[str] = set()
        self._ended_at: dict[str, int] = {}  # episode id -> index of its best ended line
        self._dirty = False
        self._changed: anyio.Event | None = None
        self._closed = False
        #: the write error that stopped the log (a full disk, say); nothing is written after it
        self.failed: UserError | None = None

    # ------------------------------------------------------------------ open

    @classmethod
    def open(
        cls, run_dir: Path, manifest: dict[str, Any], *, result_keys: Sequence[str] = ()
    ) -> RunStore:
        """Create a run directory, or reopen one for resuming.

        ``manifest`` is the run's full configuration (JSON-friendly). When the
        directory already holds a run, every dotted key in ``result_keys``
        must have the same value as when it was made; otherwise this raises a
        :class:`UserError` naming each difference. A truncated last line of the
        event log is cut off with a warning.
        """
        run_dir = Path(run_dir)
        if run_dir.exists() and not run_dir.is_dir():
            raise UserError(f"run dir {run_dir} exists and is not a directory")
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
            lock_fh = lock_run_dir(run_dir)
        except OSError as exc:
            raise UserError(f"cannot use run dir {run_dir}: {exc.strerror or exc}") from None
        try:
            return cls._open_locked(run_dir, manifest, result_keys, lock_fh)
        except OSError as exc:
            lock_fh.close()
            raise UserError(
                f"cannot use run dir {run_dir}: {exc.strerror or exc}"
                + (f" ({exc.filename})" if exc.filename else "")
            ) from None

    @classmethod
    def _open_locked(
        cls,
        run_dir: Path,
        manifest: dict[str, Any],
        result_keys: Sequence[str],
        lock_fh: IO[bytes],
    ) -> RunStore:
        try:
            stored, resumed = open_manifest(run_dir, manifest, result_keys)
            store = cls(run_dir, stored)
            store._lock_fh = lock_fh
            store.resumed = resumed
            store._load_events()
            atomic_write(
                run_dir / MANIFEST, store._scrub.json(_dumps_pretty(stored), orjson.OPT_INDENT_2)
            )
            store._fh = open(store.events_path, "ab")
        except BaseException:
            lock_fh.close()
            raise
        if resumed:
            log.info(
                "run.resume",
                run_dir=str(run_dir),
                events=store.offset,
                completed=len(store._completed),
            )
        return store

    def _load_events(self) -> None:
        """Index the existing log (streaming it, not loading it whole); cut off a torn last line."""

        def line(index: int, event: Mapping[str, Any], raw: bytes, end: int) -> None:
            self._index(index, event, raw)
            self._pos.append(end)

        self.repaired = load_log(self.events_path, line)

    def _index(self, index: int, event: Mapping[str, Any], raw: bytes) -> None:
        ring = self._ring
        ring.append(raw)
        self._ring_bytes += len(raw)
        while len(ring) > 1 and (len(ring) > self.RING or self._ring_bytes > self.RING_BYTES):
            self._ring_bytes -= len(ring.popleft())
        if event.get("type") != EPISODE_ENDED:
            return
        eid = event.get("episode_id")
        if not isinstance(eid, str):
            return
        eid = sys.intern(eid)  # the same id object as the run's other per-cell tables
        if payload_counts(event):
            if eid not in self._completed:
                self._completed.add(eid)
                self._ended_at[eid] = index
        elif eid not in self._completed:
            self._ended_at[eid] = index

    # ---------------------------------------------------------------- reading

    @property
    def offset(self) -> int:
        """Number of events stored (also the ``seq`` of the latest one)."""
        return len(self._pos) - 1

    def completed_episode_ids(self) -> set[str]:
        """Episode ids with an outcome that counts; re-running them would double-count."""
        return set(self._completed)

    def records(self) -> Iterator[EpisodeRecord]:
        """Every episode record of the log, in log order (malformed ones skipped).

        Resume feeds these through the same :class:`~agentbus.core.record.RecordBook`
        rule the live run uses, so the two cannot count differently.
        """
        for event in self.replay():
            if event.get("type") == EPISODE_ENDED:
                record = EpisodeRecord.parse(event)
                if record is not None:
                    yield record

    def flush(self) -> None:
        """Hand buffered lines to the OS (what survives a ``kill -9``)."""
        if self._fh is not None and self._dirty and self.failed is None:
            try:
                self._fh.flush()
            except OSError as exc:
                raise self._write_failed(exc) from None
            self._dirty = False

    def _write_failed(self, exc: OSError) -> UserError:
        """Stop writing (a later line after a lost one would leave a hole) and say why.

        What reached the file before stays; a partly written last line is cut
        off when the run is resumed.
        """
        if self.failed is None:
            self.failed = UserError(
                f"cannot write the event log {self.events_path}: {exc.strerror or exc}; "
                "every event already on disk is kept: fix it, then resume "
                f"with --resume {self.run_dir}"
            )
        return self.failed

    def replay(self, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        """Every stored event from offset ``start`` (0 = the first), as dicts.

        Reads in batches, so replaying a long run does not hold the whole log
        in memory. Events appended while iterating are included up to ``stop``
        as it was when the iteration began.
        """
        start, stop = self._span(start, stop)
        while start < stop:
            batch = self.read_lines(start, min(stop, start + 4096))
            start += len(batch)
            for raw in batch:
                event = _parse(raw)
                if event is not None:
                    yield event

    def read_lines(self, start: int = 0, stop: int | None = None) -> list[bytes]:
        """Raw lines ``[start, stop)`` (newline included); from memory when recent.

        Call it on the event loop (it may flush the writer); use
        :meth:`read_lines_async` where old lines may have to come from disk.
        """
        start, stop = self._span(start, stop)
        if start >= stop:
            return []
        ring_base = self.offset - len(self._ring)
        if start >= ring_base:
            return [self._ring[i - ring_base] for i in range(start, stop)]
        self.flush()
        return self._read_bytes(self._pos[start], self._pos[stop])

    async def read_lines_async(self, start: int = 0, stop: int | None = None) -> list[bytes]:
        """:meth:`read_lines` with disk reads in a worker thread."""
        start, stop = self._span(start, stop)
        if start >= stop or start >= self.offset - len(self._ring):
            return self.read_lines(start, stop)
        self.flush()  # on the loop: the thread only reads bytes already handed to the OS
        return await anyio.to_thread.run_sync(self._read_bytes, self._pos[start], self._pos[stop])

    def _span(self, start: int, stop: int | None) -> tuple[int, int]:
        stop = self.offset if stop is None else min(stop, self.offset)
        return max(0, start), stop

    def _read_bytes(self, begin: int, end: int) -> list[bytes]:
        with open(self.events_path, "rb") as fh:
            fh.seek(begin)
            data = fh.read(end - begin)
        return data.splitlines(keepends=True)

    def episode_event(self, episode_id: str) -> dict[str, Any] | None:
        """The ``episode.ended`` event of an episode: the one that counts, else the latest."""
        index = self._ended_at.get(episode_id)
        if index is None:
            return None
        lines = self.read_lines(index, index + 1)
        return _parse(lines[0]) if lines else None

    async def episode_event_async(self, episode_id: str) -> dict[str, Any] | None:
        """:meth:`episode_event` with a disk read in a worker thread."""
        index = self._ended_at.get(episode_id)
        if index is None:
            return None
        lines = await self.read_lines_async(index, index + 1)
        return _parse(lines[0]) if lines else None

    async def wait_beyond(self, offset: int) -> None:
        """Return once more than ``offset`` events are stored (or the store closes)."""
        while self.offset <= offset and not self._closed:
            if self._changed is None:
                self._changed = anyio.Event()
            await self._changed.wait()

    @property
    def closed(self) -> bool:
        return self._closed

    # ---------------------------------------------------------------- writing

    async def append(self, event: Event | Mapping[str, Any]) -> int:
        """Store one event; returns its ``seq`` (1-based position in the log)."""
        if self.failed is not None:
            raise self.failed
        if self._fh is None:
            raise RuntimeError("the run store is closed")
        given = event.to_json() if isinstance(event, Event) else dict(event)
        seq = self.offset + 1
        # "v" and "seq" first: readers find the seq without parsing the line
        data = {"v": given.pop("v", SCHEMA_VERSION), "seq": seq}
        given.pop("seq", None)
        data.update(given)
        raw = self._scrub.json(orjson.dumps(data, default=_jsonable, option=_OPTS) + b"\n")
        try:
            self._fh.write(raw)
        except OSError as exc:
            raise self._write_failed(exc) from None
        self._dirty = True
        if data.get("type") in FLUSH_TYPES:
            self.flush()
        self._index(seq - 1, data, raw)
        self._pos.append(self._pos[-1] + len(raw))
        self._wake()
        return seq

    def _wake(self) -> None:
        ev = self._changed
        if ev is not None:
            self._changed = None
            ev.set()

    async def consume(
        self,
        hub: EventHub,
        *,
        maxsize: int = 1024,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Write every event of ``hub`` until the hub closes.

        Start it with ``await tg.start(store.consume, hub)``: it subscribes
        (block policy: the log never drops anything) before reporting ready,
        so no event published after that is missed. ``hub.close()`` ends it
        once the queue is drained.
        """
        sub = hub.subscribe(maxsize=maxsize, policy="block")
        task_status.started()
        try:
            async for event in sub:
                await self.append(event)
        finally:
            # Cancelled (the run's task group ends)? What was already published
            # is in the queue: write it too, so a final event is never lost.
            with anyio.CancelScope(shield=True):
                while len(sub.mailbox) and self._fh is not None and self.failed is None:
                    await self.append(await sub.get())
            sub.close()
            self.flush()

    def write_json(self, name: str, data: Any) -> Path:
        """Write a results file (JSON) atomically inside the run directory."""
        return self.write_bytes(name, _dumps_pretty(data))

    def write_text(self, name: str, text: str) -> Path:
        """Write a results file (text) atomically inside the run directory."""
        return self.write_bytes(name, text.encode())

    def write_bytes(self, name: str, data: bytes) -> Path:
        """Write a results file (bytes, e.g. a plot) atomically inside the run directory."""
        path = self.path_for(name)
        if path.name in (MANIFEST, EVENTS, LOCK):
            raise UserError(f"{name!r} is reserved for the run store")
        if path.suffix == ".json":
            data = self._scrub.json(data, orjson.OPT_INDENT_2)
        elif path.suffix in TEXT_SUFFIXES:
            data = self._scrub.raw(data)
        try:
            atomic_write(path, data)
        except OSError as exc:
            raise UserError(
                f"cannot write {path}: {exc.strerror or exc}; the event log is complete: free "
                f"space, then rebuild the results with python -m agentbus.report {self.run_dir}"
            ) from None
        return path

    def path_for(self, name: str) -> Path:
        """``run_dir / name``, refusing names that escape the run directory."""
        return safe_join(self.run_dir, name)

    def close(self) -> None:
        """Flush the log, release the directory lock; idempotent."""
        if self._closed:
            return
        self._closed = True
        error: UserError | None = None
        if self._fh is not None:
            try:
                self.flush()
            except UserError as exc:
                error = exc
            with contextlib.suppress(OSError):  # the buffer was lost with the flush
                self._fh.close()
            self._fh = None
        if self._lock_fh is not None:
            self._lock_fh.close()
            self._lock_fh = None
        self._wake()
        if error is not None:
            raise error

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: the names other modules import from here (some now live in manifest.py and run_files.py)
__all__ = ["RunStore"]
