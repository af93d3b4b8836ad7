"""Files of a run directory: safe names, atomic writes, its lock, the log's line rules.

A run directory is written by one process at a time (:func:`lock_run_dir`),
its reports are replaced atomically (:func:`atomic_write`), a name from
outside never leaves it (:func:`safe_join`), and the event log's lines follow
one rule for damage: only a torn last line may be cut off
(:func:`torn_write`, :func:`check_log`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import orjson
import structlog

from agentbus.core.errors import UserError
from agentbus.runs.plausible import impossible_outcome

log = structlog.get_logger(__name__)

EVENTS = "events.jsonl"
LOCK = ".lock"


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


def lock_run_dir(run_dir: Path) -> IO[bytes]:
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


def load_log(path: Path, on_line: Callable[[int, Mapping[str, Any], bytes, int], None]) -> int:
    """Read a run's event log line by line; cut off a torn last line; bytes cut off.

    ``on_line(index, event, raw, end)`` gets each good line with the byte offset
    where it ends. Only the last line may be bad, and only if it looks like a
    write that was cut short (:func:`torn_write`); anything else is refused
    with the file left exactly as it is (:func:`check_log` applies the same
    rule for ``agentbus.report``), and so is an impossible sequence of
    outcomes (:func:`~agentbus.runs.plausible.impossible_outcome`).
    """
    if not path.exists():
        return 0
    good_end = 0
    size = 0
    bad: tuple[int, bytes] | None = None
    started: set[str] = set()
    kept = 0
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
            on_line(index, event, raw, size)
            kept += 1
            good_end = size
    if bad is None:
        return 0
    if not torn_write(bad[1]):
        raise _not_a_log(path, f"line {bad[0] + 1} holds binary data, not a torn JSON line")
    log.warning(
        "store.repaired_tail",
        file=str(path),
        dropped_bytes=size - good_end,
        kept_events=kept,
    )
    with open(path, "r+b") as fh:
        fh.truncate(good_end)
        fh.flush()
        os.fsync(fh.fileno())
    return size - good_end
