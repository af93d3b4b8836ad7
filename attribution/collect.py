"""Turn episode records into one game per test model.

Shared by the live service and by ``agentbus.report`` (which replays the event
log), so the live estimates and the rebuilt report can never disagree on what
counts: both feed :class:`agentbus.core.record.RecordBook`, the one counting rule
(each cell at most once, the latest counting attempt wins, infrastructure
failures never count and are tallied by kind).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from agentbus.core.errors import UserError
from agentbus.core.events import EPISODE_ENDED
from agentbus.core.inputs import json_object
from agentbus.core.record import EpisodeRecord, RecordBook
from attribution.game import Game


class Collector:
    """Per-test-model games built from coalition-episode records."""

    def __init__(self, slots: Iterable[str] | None = None) -> None:
        self.slots: tuple[str, ...] | None = tuple(slots) if slots is not None else None
        self.default_model: str | None = None
        self.games: dict[str, Game] = {}
        #: test model -> slot -> {"default": label, "test": label}, for runs that
        #: vary implementations (episode metadata ``variants``); empty otherwise
        self.variants: dict[str, dict[str, dict[str, str]]] = {}
        self.book = RecordBook()
        #: payloads that were not records of this game (malformed, other slots, best run)
        self.ignored = 0
        #: cell -> (test model, coalition key) of every cell with a failed attempt
        self._failed_cells: dict[str, tuple[str, str]] = {}

    @property
    def episodes(self) -> int:
        return sum(g.episodes for g in self.games.values())

    @property
    def failures(self) -> dict[str, int]:
        """Failed (never counted) attempts per test model."""
        return {m: n for m, n in self.book.failures_by_model.items() if n}

    @property
    def failure_kinds(self) -> dict[str, int]:
        return dict(self.book.failures_by_kind)

    def uncounted(self) -> dict[str, dict[str, int]]:
        """test model -> coalition key -> cells whose every attempt so far failed.

        Once a run has ended these are the cells given up after their attempts;
        which cells give up is not random (long episodes meet more faults), so
        reports show them by coalition (see :func:`attribution.results.given_up`).
        """
        out: dict[str, dict[str, int]] = {}
        for cell, (model, key) in self._failed_cells.items():
            if not self.book.is_counted(cell):
                row = out.setdefault(model, {})
                row[key] = row.get(key, 0) + 1
        return out

    def game(self, test_model: str) -> Game:
        game = self.games.get(test_model)
        if game is None:
            if self.slots is None:
                raise UserError("the slots of the game are not known yet")
            game = self.games[test_model] = Game(self.slots)
        return game

    def observe(self, item: Mapping[str, Any] | EpisodeRecord) -> bool:
        """Record one episode (a record or an ``episode.ended`` payload); True if it counted.

        Payloads that are not coalition records of this game (other slots, the
        best-combination run, malformed) are ignored and counted in ``ignored``.
        """
        record = item if isinstance(item, EpisodeRecord) else EpisodeRecord.parse(item)
        if record is None or record.kind != "coalition" or record.test_model is None:
            self.ignored += 1
            return False
        if self.slots is None:
            if not record.slots:
                self.ignored += 1
                return False
            self.slots = record.slots
        elif record.slots and record.slots != self.slots:
            self.ignored += 1
            return False
        if not set(record.coalition) <= set(self.slots):
            self.ignored += 1
            return False
        if self.default_model is None and record.default_model is not None:
            self.default_model = record.default_model
        variants = record.metadata.get("variants")
        if variants and record.test_model not in self.variants:
            self.variants[record.test_model] = variants
        change = self.book.add(record)
        if not change.counted:
            if not record.counts:
                self._failed_cells[record.episode_id] = (record.test_model, record.coalition_key)
            return False
        if change.replaced is not None:
            self._rebuild(record.test_model)
        else:
            self.game(record.test_model).add(record.coalition, record.task_id, record.reward)
        return True

    def _rebuild(self, test_model: str) -> None:
        """A cell counted twice (a later attempt won): rebuild that model's game."""
        game = self.games[test_model] = Game(self.slots or ())
        for record in self.book.records("coalition"):
            if record.test_model == test_model:
                game.add(record.coalition, record.task_id, record.reward)


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """Events of an ``events.jsonl`` log, skipping a torn last line.

    A crash (even ``kill -9``) can leave the last line half written; any line
    that does not parse as a JSON object is skipped.
    """
    with path.open("rb") as fh:
        for line in fh:
            event = json_object(line)
            if event is not None:
                yield event


def read_records(path: Path) -> Iterator[EpisodeRecord]:
    """Every parseable episode record of a log, in log order."""
    for event in read_events(path):
        if event.get("type") == EPISODE_ENDED:
            record = EpisodeRecord.parse(event)
            if record is not None:
                yield record


def collect_from_log(path: Path) -> Collector:
    """Replay every ``episode.ended`` event of a log into a fresh collector."""
    collector = Collector()
    for event in read_events(path):
        if event.get("type") == EPISODE_ENDED:
            collector.observe(event)
    return collector
