"""The episode record and the one counting rule.

An :class:`EpisodeRecord` is built exactly once, when an episode ends, from
its spec and its outcome. It is what the ``episode.ended`` event carries,
what the event log stores, and what every reader parses back: the run store
(resume), the live attribution service, ``agentbus.report``, the progress
display, the dashboard, the best-combination run and the adaptive scheduler.

Each record belongs to a *cell*: one (test model, coalition, task, repeat) of
the evaluation grid, named by ``episode_id``. A cell may be attempted several
times (an infrastructure failure is retried, a crash is resumed). The
counting rule lives in :class:`RecordBook` and nowhere else:

* a record *counts* when its outcome measures the agent: no error, or an
  ending that is the agent's own (it ran out of steps, or a user's agent
  crashed, ran past its limit, gave no result, called a refused module or
  exceeded a cap: ``AGENT_ENDINGS``); infrastructure failures, crashes of
  agentbus's own actors and wall-clock timeouts never count and are tallied
  by kind;
* each cell counts at most once: the counting record with the highest
  attempt number wins (on a tie, the later one);
* a cell with failed attempts and no counting one is *unresolved*.

A book lasts as long as the run and holds one counting record per cell, so it
keeps each one packed (:class:`PackedRecord`: its JSON without the message
trace, deflated, about 0.25 KB instead of about 8 KB of pydantic objects) and
unpacks it when it is read. The log keeps the full record, trace included.
"""

from __future__ import annotations

import sys
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentbus.core.outcome import Outcome, SlotUsage, is_agent_failure, kind_counts
from agentbus.llm.prices import PriceTable

if TYPE_CHECKING:
    from agentbus.core.episode import EpisodeSpec


def price_usage(usage: Mapping[str, SlotUsage], prices: PriceTable) -> dict[str, SlotUsage]:
    """Each slot's usage with its agent cost and billed cost in USD (None: no price)."""
    out: dict[str, SlotUsage] = {}
    for slot, u in usage.items():
        price = prices.price(u.model) if u.model else None
        if price is None:
            out[slot] = u
            continue
        out[slot] = u.model_copy(
            update={
                "cost_usd": price.cost(u.input_tokens, u.cached_input_tokens, u.output_tokens),
                "sent_usd": price.cost(
                    u.sent_input_tokens, u.sent_cached_input_tokens, u.sent_output_tokens
                ),
            }
        )
    return out


#: a coalition episode of the evaluation grid, one of the best-combination run, or
#: one of an assignment run by ``--pareto``
RecordKind = Literal["coalition", "best", "pareto"]

#: spec metadata keys that become record fields (the rest stays in ``metadata``)
_FIELDS = ("kind", "test_model", "default_model", "coalition", "slots", "repeat", "env")


class EpisodeRecord(BaseModel):
    """What one attempt at one cell of the evaluation gave; see the module docstring."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    #: the cell: stable across attempts (``MODEL|COALITION|TASK|rREPEAT``)
    episode_id: str
    kind: RecordKind = "coalition"
    task_id: str
    repeat: int = 0
    #: 1 for the first try of this cell, 2 for its first retry, ...
    attempt: int = Field(default=1, ge=1)
    #: whether this attempt measures the agent (see :meth:`RecordBook.add`)
    counts: bool = True
    #: ordinal of the scheduling block (task block) the cell was issued in
    block: int | None = None
    test_model: str | None = None
    default_model: str | None = None
    coalition: tuple[str, ...] = ()
    slots: tuple[str, ...] = ()
    assignment: dict[str, str] = Field(default_factory=dict)
    env: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    outcome: Outcome

    @classmethod
    def build(
        cls, spec: EpisodeSpec, outcome: Outcome, prices: PriceTable | None = None
    ) -> EpisodeRecord:
        """The record of ``spec``'s attempt that ended with ``outcome``.

        With ``prices``, each slot's tokens are priced (USD) once, here, so the
        log, budgets and results all read the same figure.
        """
        if prices is not None and outcome.usage:
            outcome = outcome.model_copy(update={"usage": price_usage(outcome.usage, prices)})
        meta = dict(spec.metadata)
        fields: dict[str, Any] = {k: meta.pop(k) for k in _FIELDS if k in meta}
        assignment = meta.pop("assignment", None) or {}
        return cls(
            episode_id=spec.episode_id,
            task_id=spec.task.id,
            attempt=spec.attempt,
            block=spec.block,
            counts=outcome.counts_for_value,
            assignment=assignment,
            metadata=meta,
            outcome=outcome,
            **fields,
        )

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> EpisodeRecord | None:
        """A record from an ``episode.ended`` payload or stored event; None if malformed.

        ``counts`` is always recomputed from the outcome, so a log written by
        an older version (or edited by hand) cannot smuggle in a different rule.
        """
        try:
            record = cls.model_validate(data)
        except (ValidationError, TypeError, ValueError):
            return None
        expected = record.outcome.counts_for_value
        if record.counts != expected:
            record = record.model_copy(update={"counts": expected})
        return record

    def payload(self) -> dict[str, Any]:
        """The JSON-friendly ``episode.ended`` payload (``None`` fields left out)."""
        return self.model_dump(mode="json", exclude_none=True)

    def without_trace(self) -> EpisodeRecord:
        """This record without its message trace (the same record when it has none).

        Readers that keep records for the whole run (the attribution service's
        books) need the numbers, not the trace, which the event log already
        holds: keeping it grew a long run's memory by tens of KB per episode.
        """
        if self.outcome.trace is None:
            return self
        return self.model_copy(update={"outcome": self.outcome.model_copy(update={"trace": None})})

    @property
    def coalition_key(self) -> str:
        """Results-file key of the coalition: members in slot order joined by '+'."""
        members = set(self.coalition)
        order = self.slots or tuple(sorted(members))
        return "+".join(s for s in order if s in members)

    @property
    def reward(self) -> float:
        return self.outcome.reward


def _field_names() -> bytes:
    """The JSON keys every packed record repeats (the start of each book's dictionary)."""
    names = [*EpisodeRecord.model_fields, *Outcome.model_fields, *SlotUsage.model_fields]
    return "".join(f'"{name}":' for name in names).encode()


_FIELD_NAMES = _field_names()
#: deflate looks back at most this far, so a longer dictionary would only take memory
_WINDOW = 32 * 1024
#: raw deflate (no header, no checksum: the bytes never leave the process)
_RAW = -15


@dataclass(frozen=True, slots=True)
class PackedRecord:
    """One counting record as a book keeps it: the cell's id and attempt, the rest deflated.

    ``data`` is the record's JSON (defaults and the message trace left out),
    deflated by the book's :class:`RecordPacker`: about 0.25 KB per cell where
    the pydantic objects (one per slot's usage too) took about 8 KB, which a
    long run kept for every cell of its books.
    """

    episode_id: str
    kind: str
    attempt: int
    data: bytes


class RecordPacker:
    """Packs and unpacks the records of one book.

    Its deflate dictionary is the field names plus the first record packed:
    the records of one run repeat its keys, slot names, models and task-id
    prefixes, so each packs to a few hundred bytes. The dictionary is fixed at
    the first record, so every record of the book unpacks with the same one.
    """

    def __init__(self) -> None:
        self._zdict: bytes | None = None

    def pack(self, record: EpisodeRecord) -> PackedRecord:
        raw = orjson.dumps(
            record.model_dump(mode="json", exclude_defaults=True, exclude={"outcome": {"trace"}})
        )
        if self._zdict is None:
            self._zdict = (_FIELD_NAMES + raw)[-_WINDOW:]
        deflate = zlib.compressobj(6, zlib.DEFLATED, _RAW, zdict=self._zdict)
        return PackedRecord(
            sys.intern(record.episode_id),
            record.kind,
            record.attempt,
            deflate.compress(raw) + deflate.flush(),
        )

    def unpack(self, packed: PackedRecord) -> EpisodeRecord:
        """The record ``packed`` was made from (equal to it, without its trace)."""
        if self._zdict is None:
            raise ValueError("this packer has packed nothing yet")
        inflate = zlib.decompressobj(_RAW, zdict=self._zdict)
        data = orjson.loads(inflate.decompress(packed.data) + inflate.flush())
        return EpisodeRecord.model_validate(data)


@dataclass(frozen=True, slots=True)
class Change:
    """What adding one record did to the book."""

    counted: bool
    #: the counting record this one replaced (a second counting attempt of the cell)
    replaced: EpisodeRecord | None = None


class RecordBook:
    """The one counting rule over a stream of records (see the module docstring).

    Records read back from a book are equal to the ones added, without their
    message trace (the log has it), and new objects on every read.
    """

    def __init__(self) -> None:
        self._counting: dict[str, PackedRecord] = {}
        self._packer = RecordPacker()
        self._attempts: dict[str, int] = {}
        #: failed attempts by error kind, over the whole stream
        self.failures_by_kind: Counter[str] = Counter()
        #: failed attempts per test model (``""`` for records without one)
        self.failures_by_model: Counter[str] = Counter()

    def add(self, record: EpisodeRecord) -> Change:
        """Apply the counting rule to one more record."""
        cell = sys.intern(record.episode_id)  # one copy of the id for the book's two tables
        self._attempts[cell] = max(self._attempts.get(cell, 0), record.attempt)
        if not record.counts:
            kind = record.outcome.error_kind or "unknown"
            self.failures_by_kind[kind] += 1
            self.failures_by_model[record.test_model or ""] += 1
            return Change(False)
        old = self._counting.get(cell)
        if old is not None and old.attempt > record.attempt:
            return Change(False)  # a stale attempt arriving late: the newer one stands
        self._counting[cell] = self._packer.pack(record)
        return Change(True, None if old is None else self._packer.unpack(old))

    # -- reading --------------------------------------------------------------

    def counted(self, cell: str) -> EpisodeRecord | None:
        """The record that counts for ``cell``, if any (without its trace)."""
        packed = self._counting.get(cell)
        return None if packed is None else self._packer.unpack(packed)

    def is_counted(self, cell: str) -> bool:
        return cell in self._counting

    def attempts(self, cell: str) -> int:
        """How many attempts of ``cell`` have been recorded (highest attempt number)."""
        return self._attempts.get(cell, 0)

    def records(self, kind: RecordKind | None = None) -> Iterator[EpisodeRecord]:
        """Counting records, one per cell, in the order their cells first counted.

        Each is unpacked as it is reached (without its trace): iterate, do not
        keep them all, where the book is large.
        """
        for packed in self._counting.values():
            if kind is None or packed.kind == kind:
                yield self._packer.unpack(packed)

    @property
    def count(self) -> int:
        return len(self._counting)

    def unresolved(self) -> list[str]:
        """Cells that were attempted but have no counting record."""
        return [cell for cell in self._attempts if cell not in self._counting]

    def failure_summary(self) -> dict[str, Any]:
        """Infrastructure failures for reports: attempts by kind, cells never counted."""
        return {
            "attempts": sum(self.failures_by_kind.values()),
            "by_kind": dict(sorted(self.failures_by_kind.items())),
            "unresolved_cells": len(self.unresolved()),
        }


def agent_failures(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """How many counted episodes ended in each of the agent's own failures, and where.

    ``by_kind`` (kind -> episodes), ``by_coalition`` (coalition key -> kind ->
    episodes) and ``reasons`` (kind -> the first reason seen), over the
    records given (the counting ones: these failures count in v(S) as the
    agent's, so reports must say how many of a coalition's zeros they are).
    """
    by_kind: Counter[str] = Counter()
    by_coalition: dict[str, Counter[str]] = {}
    reasons: dict[str, str] = {}
    saturated: list[str] = []
    episodes = 0
    for record in records:
        episodes += 1
        kind = record.outcome.error_kind
        if not is_agent_failure(kind):
            continue
        assert kind is not None
        by_kind[kind] += 1
        by_coalition.setdefault(record.coalition_key, Counter())[kind] += 1
        reasons.setdefault(kind, record.outcome.reason)
        busy = record.outcome.details.get("saturated")
        if kind == "agent_timeout" and isinstance(busy, str):
            saturated.append(busy)
    return {
        "episodes": episodes,
        "failed": sum(by_kind.values()),
        "by_kind": dict(sorted(by_kind.items())),
        "by_coalition": {k: dict(sorted(c.items())) for k, c in by_coalition.items()},
        "reasons": reasons,
        #: time-outs hit while the machine was saturated, and the last load seen
        "saturated": len(saturated),
        **({"load": saturated[-1]} if saturated else {}),
    }


__all__ = [
    "Change",
    "EpisodeRecord",
    "PackedRecord",
    "RecordBook",
    "RecordKind",
    "RecordPacker",
    "agent_failures",
    "payload_counts",
    "price_usage",
]


def payload_counts(data: Mapping[str, Any]) -> bool:
    """Whether a raw ``episode.ended`` payload counts, without building the record.

    For hot paths that only need the verdict (the log writer's resume index);
    the same rule as :attr:`Outcome.counts_for_value`.
    """
    outcome = data.get("outcome")
    return isinstance(outcome, Mapping) and kind_counts(outcome.get("error_kind"))
