"""A finished run directory, opened read-only: for the viewer, exports and comparisons.

:class:`ReadOnlyStore` gives the live server what it reads from a run store
(events by offset, one episode's record, the manifest) without the lock, the
manifest rewrite or the tail repair that opening a run for writing does; a
damaged or half-written last line (a crash, or a run still being written) is
skipped, never cut off. :func:`scan` reads the log once into an
:class:`~agentbus.runs.episodes.EpisodeIndex`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from agentbus.core.errors import UserError
from agentbus.core.events import EPISODE_ENDED
from agentbus.core.inputs import json_object
from agentbus.core.outcome import kind_counts
from agentbus.runs.episodes import EpisodeIndex
from agentbus.runs.manifest import MANIFEST
from agentbus.runs.run_files import EVENTS
from agentbus.runs.store import RunStore

RESULTS = "results.json"


def check_run_dir(run_dir: Path) -> Path:
    """``run_dir`` when it holds a run's event log; else one clear :class:`UserError`."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UserError(f"run directory {str(run_dir)!r} does not exist or is not a directory")
    if not (run_dir / EVENTS).is_file():
        raise UserError(f"no {EVENTS} in {str(run_dir)!r}: not a run directory")
    return run_dir


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or None when missing or unreadable."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


class ReadOnlyStore(RunStore):
    """A run store over a finished run's log; nothing is ever written."""

    @classmethod
    def prepare(cls, run_dir: Path) -> ReadOnlyStore:
        """The store, not read yet (:meth:`scan` reads it)."""
        run_dir = check_run_dir(run_dir)
        store = cls(run_dir, read_json(run_dir / MANIFEST) or {})
        store._closed = True  # nothing more will come: streams end at the last event
        return store

    @classmethod
    def open_finished(cls, run_dir: Path) -> ReadOnlyStore:
        store = cls.prepare(run_dir)
        store.scan()
        return store

    def scan(self, sink: Callable[[dict[str, Any], int], None] | None = None) -> None:
        """Index the log, handing every event and its line number to ``sink`` too (one pass)."""
        try:
            self._scan(sink)
        except OSError as exc:
            raise UserError(f"cannot read {self.events_path}: {exc.strerror or exc}") from None

    def _scan(self, sink: Callable[[dict[str, Any], int], None] | None) -> None:
        size = 0
        with open(self.events_path, "rb") as fh:
            for index, raw in enumerate(fh):
                event = _parse(raw)
                if event is None:
                    # a last line still being written (or torn by a crash) is left out;
                    # a bad line with valid ones after it is damage, as resuming says
                    if fh.read().strip():
                        raise UserError(
                            f"{self.events_path} line {index + 1} is corrupt and is followed "
                            "by valid lines: repair or move the file"
                        )
                    break
                size += len(raw)
                self._index(index, event, raw)
                self._pos.append(size)
                if sink is not None:
                    self._sink(sink, event, index)

    def _sink(
        self, sink: Callable[[dict[str, Any], int], None], event: dict[str, Any], index: int
    ) -> None:
        """Hand one event on; one with a field of the wrong type is named and left out.

        A log edited by hand (or by an agent that could write to it) must not
        take the whole viewer down: the rest of the run is still shown.
        """
        try:
            sink(event, index)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            print(
                f"agentbus: {self.events_path} line {index + 1}: malformed "
                f"{event.get('type', 'untyped')} event left out ({type(exc).__name__}: {exc})",
                file=sys.stderr,
            )

    def close(self) -> None:  # nothing to release
        self._closed = True


def _parse(raw: bytes) -> dict[str, Any] | None:
    return json_object(raw) if raw.endswith(b"\n") else None


def scan(run_dir: Path) -> EpisodeIndex:
    """Every episode of ``run_dir``'s log, indexed (complete lines only)."""
    run_dir = check_run_dir(run_dir)
    index = EpisodeIndex()
    try:
        with open(run_dir / EVENTS, "rb") as fh:
            for line, raw in enumerate(fh):
                if b'"episode.ended"' not in raw:
                    continue
                event = _parse(raw)
                if event is not None:
                    index.add(event, line)
    except OSError as exc:
        raise UserError(f"cannot read {run_dir / EVENTS}: {exc.strerror or exc}") from None
    return index


def episode_event(run_dir: Path, episode_id: str) -> dict[str, Any] | None:
    """The ``episode.ended`` event of one episode (the one that counts, else the latest)."""
    run_dir = check_run_dir(run_dir)
    needle = orjson.dumps(episode_id)
    found: dict[str, Any] | None = None
    with open(run_dir / EVENTS, "rb") as fh:
        for raw in fh:
            if needle not in raw or b'"episode.ended"' not in raw:
                continue
            event = json_object(raw)
            if event is None or event.get("episode_id") != episode_id:
                continue
            if event.get("type") != EPISODE_ENDED:
                continue
            outcome = event.get("outcome") or {}
            counts = kind_counts(outcome.get("error_kind"))
            if counts:
                return event
            found = event
    return found
