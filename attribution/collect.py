"""Turn ``episode.ended`` payloads into one game per test model.

Shared by the live service and by ``agentbus.report`` (which replays the event
log), so the live estimates and the rebuilt report can never disagree on what
counts: infrastructure failures (an ``error_kind`` other than ``step_limit``)
are counted apart and never enter v(S); an episode id seen twice (a replayed
log plus the live stream) counts once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from agentbus.errors import UserError
from attribution.game import Game

EPISODE_ENDED = "episode.ended"


class Collector:
    """Per-test-model games built from episode payloads."""

    def __init__(self, slots: Iterable[str] | None = None) -> None:
        self.slots: tuple[str, ...] | None = tuple(slots) if slots is not None else None
        self.default_model: str | None = None
        self.games: dict[str, Game] = {}
        self.failures: dict[str, int] = {}
        self.failure_kinds: dict[str, dict[str, int]] = {}
        self.ignored = 0
        self._seen: set[str] = set()

    @property
    def episodes(self) -> int:
        return sum(g.episodes for g in self.games.values())

    def game(self, test_model: str) -> Game:
        game = self.games.get(test_model)
        if game is None:
            if self.slots is None:
                raise UserError("the slots of the game are not known yet")
            game = self.games[test_model] = Game(self.slots)
        return game

    def observe(self, payload: Mapping[str, Any]) -> bool:
        """Record one ``episode.ended`` payload; True when it entered a game.

        Payloads that are not for this game (other slots), malformed or seen
        before are ignored and counted in ``ignored``.
        """
        if payload.get("kind") not in (None, "coalition"):
            self.ignored += 1  # e.g. the best-combination run: not a coalition episode
            return False
        try:
            episode_id = str(payload["episode_id"])
            test_model = str(payload["test_model"])
            raw = payload["coalition"]
            # a list of slot names, or the results-file key ('+'-joined)
            coalition = [p for p in raw.split("+") if p] if isinstance(raw, str) else list(raw)
            slots = tuple(payload.get("slots") or ())
            outcome = payload["outcome"]
            reward = float(outcome.get("reward", 0.0))
            task_id = str(payload["task_id"])
        except (KeyError, TypeError, ValueError, AttributeError):
            self.ignored += 1
            return False
        if episode_id in self._seen:
            self.ignored += 1
            return False
        if self.slots is None:
            if not slots:
                self.ignored += 1
                return False
            self.slots = slots
        elif slots and slots != self.slots:
            self.ignored += 1
            return False
        if self.default_model is None and payload.get("default_model") is not None:
            self.default_model = str(payload["default_model"])
        self._seen.add(episode_id)
        kind = outcome.get("error_kind")
        if kind is not None and kind != "step_limit":
            self.failures[test_model] = self.failures.get(test_model, 0) + 1
            kinds = self.failure_kinds.setdefault(test_model, {})
            kinds[str(kind)] = kinds.get(str(kind), 0) + 1
            return False
        try:
            self.game(test_model).add(coalition, task_id, reward)
        except UserError:
            self._seen.discard(episode_id)
            self.ignored += 1
            return False
        return True


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """Events of an ``events.jsonl`` log, skipping a torn last line.

    A crash (even ``kill -9``) can leave the last line half written; any line
    that does not parse as a JSON object is skipped.
    """
    with path.open("rb") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event


def collect_from_log(path: Path) -> Collector:
    """Replay every ``episode.ended`` event of a log into a fresh collector."""
    collector = Collector()
    for event in read_events(path):
        if event.get("type") == EPISODE_ENDED:
            collector.observe(event)
    return collector
