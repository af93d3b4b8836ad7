"""Run-level events and the hub that fans them out.

Events describe the run (an episode started or ended, an attribution
snapshot, a bus message when tracing), not the conversation inside one
episode. The hub hands each event to every subscriber through a bounded
mailbox, with a policy chosen per subscriber for when that mailbox is full:
``block`` (the publisher waits: for the event log, which must not lose
anything) or ``drop`` (the event is dropped and counted: for a browser tab
that cannot keep up). Publishing an event nobody subscribed to costs one dict
lookup, and callers check :meth:`EventHub.wants` before building a payload.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from agentbus.core.mailbox import Mailbox, MailboxClosed

SCHEMA_VERSION = 1

#: event types of a run, the only place they are spelt; plugins may add their own
#: (dotted names)
EPISODE_STARTED = "episode.started"
EPISODE_ENDED = "episode.ended"
RUN_STARTED = "run.started"
RUN_FINISHED = "run.finished"
#: emitted by the attribution service (:mod:`attribution.service`), defined here so
#: every reader (store, progress, live server, tail) imports the one spelling
ATTRIBUTION_SNAPSHOT = "attribution.snapshot"
#: the projected cost of the whole run (``agentbus/app/costs.py``), and the
#: ``--pareto`` front (``agentbus/app/pareto.py``)
COST_ESTIMATE = "cost.estimate"
PARETO_FRONT = "pareto.front"

Policy = Literal["block", "drop"]


@dataclass(slots=True, frozen=True)
class Event:
    """One run event: a dotted type, a JSON-friendly payload, time and sequence."""

    type: str
    data: dict[str, Any]
    ts: float = field(default_factory=time.time)
    seq: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"v": SCHEMA_VERSION, "seq": self.seq, "ts": self.ts, "type": self.type, **self.data}


class Subscription:
    """A subscriber's bounded queue of events; iterate it with ``async for``."""

    def __init__(
        self,
        hub: EventHub,
        types: frozenset[str] | None,
        maxsize: int,
        policy: Policy,
        where: Callable[[Event], bool] | None,
    ) -> None:
        self._hub = hub
        self.types = types
        self.policy: Policy = policy
        self.where = where
        self.mailbox: Mailbox[Event] = Mailbox(maxsize)
        self.dropped = 0
        self.delivered = 0

    def accepts(self, event: Event) -> bool:
        return self.where is None or self.where(event)

    async def get(self) -> Event:
        return await self.mailbox.get()

    def close(self) -> None:
        self._hub.unsubscribe(self)
        self.mailbox.close()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while True:
            try:
                yield await self.mailbox.get()
            except MailboxClosed:
                return

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventHub:
    """Fan-out of run events to subscribers through bounded queues."""

    def __init__(self) -> None:
        self._subs: list[Subscription] = []
        self._by_type: dict[str, tuple[Subscription, ...]] = {}
        self._seq = 0

    @property
    def published(self) -> int:
        return self._seq

    def subscribe(
        self,
        types: Iterable[str] | None = None,
        *,
        maxsize: int = 1024,
        policy: Policy = "block",
        where: Callable[[Event], bool] | None = None,
    ) -> Subscription:
        """Receive events of ``types`` (all when None) that pass ``where``."""
        if policy not in ("block", "drop"):
            raise ValueError(f"unknown slow-subscriber policy {policy!r}")
        sub = Subscription(self, frozenset(types) if types else None, maxsize, policy, where)
        self._subs.append(sub)
        self._by_type.clear()
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)
            self._by_type.clear()

    def _targets(self, type_: str) -> tuple[Subscription, ...]:
        targets = self._by_type.get(type_)
        if targets is None:
            targets = tuple(s for s in self._subs if s.types is None or type_ in s.types)
            self._by_type[type_] = targets
        return targets

    def wants(self, type_: str) -> bool:
        """Whether any subscriber would receive an event of ``type_``."""
        return bool(self._targets(type_))

    async def publish(self, type_: str, data: dict[str, Any]) -> Event | None:
        """Send an event to its subscribers; blocks only on ``block`` subscribers."""
        targets = self._targets(type_)
        if not targets:
            return None
        self._seq += 1
        event = Event(type_, data, time.time(), self._seq)
        for sub in targets:
            if not sub.accepts(event):
                continue
            if sub.policy == "drop" and len(sub.mailbox) >= sub.mailbox.maxsize:
                sub.dropped += 1
                continue
            try:
                await sub.mailbox.put(event)
            except MailboxClosed:
                continue
            sub.delivered += 1
        return event

    def close(self) -> None:
        for sub in list(self._subs):
            sub.close()
