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
import datetime as _dt
import fcntl
import os
import platform
import sys
import tempfile
from array import array
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import orjson
import structlog

from agentbus.errors import UserError
from agentbus.events import (
    EPISODE_ENDED,
    RUN_FINISHED,
    RUN_STARTED,
    SCHEMA_VERSION,
    Event,
    EventHub,
)
from agentbus.logs import scrubber
from agentbus.record import EpisodeRecord, payload_counts
from agentbus.runs.plausible import impossible_outcome

log = structlog.get_logger(__name__)

MANIFEST = "manifest.json"
EVENTS = "events.jsonl"
LOCK = ".lock"
MANIFEST_FORMAT = 1

#: event types whose line is handed to the OS before the writer goes on
FLUSH_TYPES = frozenset({EPISODE_ENDED, RUN_STARTED, RUN_FINISHED})

#: distributions whose versions go into the manifest (missing ones are skipped)
VERSIONED = (
    "agentbus",
    "anyio",
    "aiohttp",
    "openai",
    "anthropic",
    "pydantic",
    "numpy",
    "scipy",
    "sympy",
    "orjson",
    "vllm",
    "ray",
)

_MISSING = object()


def lookup(data: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted path (``"models.test"``), or a sentinel when absent."""
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _show(value: Any) -> str:
    if value is _MISSING:
        return "<unset>"
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def manifest_differences(
    old: Mapping[str, Any], new: Mapping[str, Any], keys: Sequence[str]
) -> list[str]:
    """``"key: old -> new"`` for each dotted key whose value differs."""
    diffs = []
    for key in keys:
        a, b = lookup(old, key), lookup(new, key)
        if a is _MISSING and b is _MISSING:
            continue
        if a is _MISSING or b is _MISSING or a != b:
            diffs.append(f"{key}={_show(a)} (this run asks {key}={_show(b)})")
    return diffs


#: config keys whose values are credentials: exact names, or names ending so
#: (``max_tokens`` and ``decode_s_per_token`` are settings, not secrets)
SECRET_KEYS = frozenset({"token", "api_key", "apikey", "secret", "password"})
SECRET_SUFFIXES = ("_api_key", "_secret", "_password", "auth_token", "access_token")


def is_secret_key(key: object) -> bool:
    name = str(key).lower()
    return name in SECRET_KEYS or name.endswith(SECRET_SUFFIXES)


def redact(data: Any) -> Any:
    """A copy with credential values (tokens, API keys) set to None.

    The manifest is a file anyone with the run directory can read, and the
    live server shows it: credentials have no place in it. Only keys that name
    a credential are cleared, so every other setting round-trips on resume.
    """
    if isinstance(data, Mapping):
        return {
            k: None if is_secret_key(k) and data[k] is not None else redact(data[k]) for k in data
        }
    if isinstance(data, list):
        return [redact(x) for x in data]
    return data


def redact_argv(argv: Sequence[str]) -> list[str]:
    """The command line with the values of credential flags (``--token X``) hidden.

    The manifest keeps the command line for the record; a secret given as a
    flag must not travel with it.
    """
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append("***")
            hide_next = False
            continue
        flag, eq, _ = arg.partition("=")
        secret = flag.startswith("--") and is_secret_key(flag[2:].replace("-", "_"))
        if secret and eq:
            out.append(f"{flag}=***")
        else:
            out.append(arg)
            hide_next = secret
    return out


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in VERSIONED:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    A reader (or a crash) sees the old file or the new one, never half of it.
    The file gets the usual permissions (0666 less the umask), not the
    temporary file's private 0600, so results can be shared like any file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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
            lock_fh = _lock(run_dir)
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
            stored = _load_manifest(run_dir)
            if stored is None:
                stored = {
                    "format": MANIFEST_FORMAT,
                    "schema": SCHEMA_VERSION,
                    "started_at": _now(),
                    "argv": redact_argv(sys.argv),
                    "versions": package_versions(),
                    "result_keys": list(result_keys),
                    "resumes": [],
                    "config": redact(manifest),
                }
                store = cls(run_dir, stored)
                resumed = False
            else:
                _check_version(run_dir, stored)
                diffs = manifest_differences(
                    stored.get("config", {}), redact(manifest), result_keys
                )
                if diffs:
                    raise UserError(
                        f"run dir {run_dir} was made with "
                        + "; ".join(diffs)
                        + "; use another --run-dir"
                    )
                stored.setdefault("resumes", []).append(
                    {"at": _now(), "versions": package_versions(), "argv": redact_argv(sys.argv)}
                )
                store = cls(run_dir, stored)
                resumed = True
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
        """Index the existing log (streaming it, not loading it whole); cut off a torn last line.

        Only the last line may be bad, and only if it looks like a write that
        was cut short (:func:`torn_write`); anything else is refused with the
        file left exactly as it is (:func:`check_log` applies the same rule
        for ``agentbus.report``).
        """
        path = self.events_path
        if not path.exists():
            return
        good_end = 0
        size = 0
        bad: tuple[int, bytes] | None = None
        started: set[str] = set()
        with open(path, "rb") as fh:
            for index, raw in enumerate(fh):
                if bad is not None:
                    raise _corrupt(path, bad[0])
                size += len(raw)
                event = _parse(raw) if raw.endswith(b"\n") else None
                if event is None:
                    if index == 0 and raw.startswith(_GZIP):
                        raise _not_a_log(path, "gzip-compressed data")
                    bad = (index, raw)
                    continue
                problem = impossible_outcome(event, started)
                if problem is not None:
                    raise UserError(
                        f"{path} line {index + 1}: {problem}; the log was edited or damaged "
                        "and is not resumed (repair or move it)"
                    )
                self._index(index, event, raw)
                self._pos.append(size)
                good_end = size
        if bad is None:
            return
        if not torn_write(bad[1]):
            raise _not_a_log(path, f"line {bad[0] + 1} holds binary data, not a torn JSON line")
        self.repaired = size - good_end
        log.warning(
            "store.repaired_tail",
            file=str(path),
            dropped_bytes=self.repaired,
            kept_events=self.offset,
        )
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())

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

        Resume feeds these through the same :class:`~agentbus.record.RecordBook`
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


def safe_join(root: Path, name: str) -> Path:
    """``root / name`` if it stays inside ``root``; a :class:`UserError` otherwise."""
    if not name or "\x00" in name:
        raise UserError(f"bad file name {name!r}")
    rel = Path(name)
    if rel.is_absolute() or ".." in rel.parts:
        raise UserError(f"file name {name!r} leaves the run directory")
    base = root.resolve()
    path = (base / rel).resolve()
    if path != base and base not in path.parents:
        raise UserError(f"file name {name!r} leaves the run directory")
    return path


#: results files that are text (scrubbed of secrets like the log); plots are images
TEXT_SUFFIXES = frozenset({".json", ".jsonl", ".md", ".txt", ".csv", ".svg", ".html"})

_OPTS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def _jsonable(obj: Any) -> Any:
    """Fallback for values orjson does not know: the log writer must never die on one."""
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    return str(obj)


_GZIP = b"\x1f\x8b"


def torn_write(raw: bytes) -> bool:
    """Whether a bad last line of the log is what a write cut short leaves behind.

    A crash leaves the start of a JSON line (``{"v":1,"seq":3,"ty``), perhaps
    followed by zeros (blocks the file system allocated but never filled), or
    only zeros. Binary data (a gzip stream, another program's output) is not a
    torn write: cutting it off would delete a file's worth of someone's data.
    """
    body = raw.rstrip(b"\n").rstrip(b"\x00")
    if not body:
        return True
    if not body.startswith(b"{") or b"\x00" in body or b"\n" in body:
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(body) - 3 and exc.reason == "unexpected end of data"
    return True


def _corrupt(path: Path, index: int) -> UserError:
    return UserError(
        f"{path} line {index + 1} is corrupt and is followed by more lines; this is not a "
        "torn last write: the log is left as it is; repair or move the file"
    )


def _not_a_log(path: Path, what: str) -> UserError:
    return UserError(
        f"{path} is not an intact agentbus event log ({what}); it is left as it is: "
        "restore the original or use another --run-dir"
    )


def check_log(path: Path) -> bool:
    """Apply the log rule without changing the file: True if the last line is torn.

    The same rule as resuming (:meth:`RunStore._load_events`): every line but
    the last must parse; a bad last line must look like a torn write. Anything
    else is a :class:`UserError`, so ``agentbus.report`` refuses a log that
    resume would refuse instead of skipping its bad lines.
    """
    bad: tuple[int, bytes] | None = None
    with open(path, "rb") as fh:
        for index, raw in enumerate(fh):
            if bad is not None:
                raise _corrupt(path, bad[0])
            if raw.endswith(b"\n") and _parse(raw) is not None:
                continue
            if index == 0 and raw.startswith(_GZIP):
                raise _not_a_log(path, "gzip-compressed data")
            bad = (index, raw)
    if bad is not None and not torn_write(bad[1]):
        raise _not_a_log(path, f"line {bad[0] + 1} holds binary data, not a torn JSON line")
    return bad is not None


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        event = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return event if isinstance(event, dict) and "type" in event else None


def _dumps_pretty(data: Any) -> bytes:
    return orjson.dumps(data, default=_jsonable, option=_OPTS | orjson.OPT_INDENT_2) + b"\n"


def _load_manifest(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / MANIFEST
    if not path.exists():
        others = [p.name for p in run_dir.iterdir() if p.name != LOCK]
        if others:
            raise UserError(
                f"run dir {run_dir} is not empty and holds no {MANIFEST}; "
                "use a new or empty --run-dir"
            )
        return None
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON ({exc}); use another --run-dir") from None
    if not isinstance(data, dict) or "config" not in data:
        raise UserError(f"{path} is not an agentbus run manifest; use another --run-dir")
    return data


def _check_version(run_dir: Path, stored: Mapping[str, Any]) -> None:
    """Refuse a run directory written by a newer agentbus (its files may mean other things)."""
    for key, ours in (("format", MANIFEST_FORMAT), ("schema", SCHEMA_VERSION)):
        theirs = stored.get(key, ours)
        if not isinstance(theirs, int) or theirs > ours:
            version = stored.get("versions", {}).get("agentbus", "unknown")
            raise UserError(
                f"run dir {run_dir} was written by a newer agentbus ({version}; manifest "
                f"{key} {theirs}, this one reads up to {ours}); upgrade or use another --run-dir"
            )


def _lock(run_dir: Path) -> IO[bytes]:
    """Hold an exclusive lock on the run dir: two writers would interleave lines."""
    fh = open(run_dir / LOCK, "a+b")
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise UserError(
            f"run dir {run_dir} is in use by another running process; "
            "wait for it or use another --run-dir"
        ) from None
    return fh
