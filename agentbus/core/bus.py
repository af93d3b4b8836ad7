"""The per-episode message bus.

One bus lives exactly as long as its episode: subscriptions, mailboxes and
traces all go away with it, so memory does not grow with the number of
episodes run. Delivery is typed: a subscriber for a base message type receives
its subtypes too. Every subscriber has one bounded mailbox, so delivery order
per subscriber is publish order and a slow subscriber slows its publishers
down (backpressure) instead of growing a queue without bound.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from agentbus.core.errors import NoHandler, RequestTimeout
from agentbus.core.mailbox import Mailbox
from agentbus.core.messages import Message

T = TypeVar("T")


class Pending(Generic[T]):
    """A value (or an exception) that one task delivers once and others wait for.

    A request's reply lands here, and so does a shared model call's answer
    (agentbus/llm/cache.py): ``done`` is set once ``value`` or ``error`` holds
    the outcome (or when the one making it gave up, leaving both unset).
    """

    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = asyncio.Event()
        self.value: T | None = None
        self.error: BaseException | None = None

    def set(self, value: T | None) -> None:
        self.value = value
        self.done.set()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self.done.set()


@dataclass(slots=True)
class Envelope:
    """A message in a mailbox, with the pending reply when it is a request."""

    message: Message
    reply: Pending[Message] | None = None


@dataclass(eq=False, slots=True)
class Inbox:
    """An actor's inbox on the bus: one mailbox and the message types routed into it.

    (Not to be confused with :class:`agentbus.core.events.Subscription`, a listener's
    queue of run events on the event hub.)

    ``wake`` is called when a message lands in the mailbox while no consumer
    is ``active``: the episode starts the consumer task then, which stays
    (parked on the empty mailbox between messages) until the episode ends.
    An actor that has received nothing yet holds no task, which keeps
    thousands of episodes waiting on their first model answers cheap.
    """

    name: str
    types: tuple[type[Message], ...]
    mailbox: Mailbox[Envelope] = field(default_factory=Mailbox)
    wake: Callable[[Inbox], None] | None = None
    active: bool = False

    async def deliver(self, envelope: Envelope) -> None:
        await self.mailbox.put(envelope)
        if not self.active and self.wake is not None:
            self.active = True
            self.wake(self)


TraceHook = Callable[[Message], None]

#: (message type, subscribed types of each subscriber in order) -> positions receiving it
_ROUTES: dict[tuple[type[Message], tuple[tuple[type[Message], ...], ...]], tuple[int, ...]] = {}
_ROUTES_MAX = 4096


class Bus:
    """Typed publish/subscribe and request/reply for one episode."""

    def __init__(self, episode_id: str, *, trace: TraceHook | None = None) -> None:
        self.episode_id = episode_id
        self._subscribers: list[Inbox] = []
        self._routes: dict[type[Message], tuple[Inbox, ...]] = {}
        self._seq = 0
        self._trace = trace
        self.unhandled: dict[str, int] = {}

    @property
    def published(self) -> int:
        """How many messages were published on this bus so far."""
        return self._seq

    def subscribe(
        self, name: str, types: Iterable[type[Message]], *, mailbox_size: int = 64
    ) -> Inbox:
        """Create a mailbox that receives every message of ``types`` (and subtypes)."""
        sub = Inbox(name, tuple(types), Mailbox(mailbox_size))
        self._subscribers.append(sub)
        self._routes.clear()
        return sub

    def subscribers(self) -> tuple[Inbox, ...]:
        return tuple(self._subscribers)

    def handles(self, msg_type: type[Message]) -> bool:
        """Whether anything would receive a message of ``msg_type``."""
        return bool(self._route(msg_type))

    def _route(self, msg_type: type[Message]) -> tuple[Inbox, ...]:
        route = self._routes.get(msg_type)
        if route is None:
            # Every episode of a run wires the same actor classes, so which
            # subscribers (by position) take a type is computed once per
            # wiring, not once per bus: issubclass over the subscribers was a
            # visible share of a short episode's cost.
            subs = self._subscribers
            key = (msg_type, tuple(s.types for s in subs))
            picks = _ROUTES.get(key)
            if picks is None:
                picks = tuple(i for i, s in enumerate(subs) if issubclass(msg_type, s.types))
                if len(_ROUTES) >= _ROUTES_MAX:
                    _ROUTES.clear()
                _ROUTES[key] = picks
            route = tuple(subs[i] for i in picks)
            self._routes[msg_type] = route
        return route

    def stamp(self, msg: Message, sender: str) -> Message:
        """Give ``msg`` this episode's id, its sender and the next sequence number.

        A fresh message (``seq == 0``: nobody has seen it yet) is stamped in
        place, which saves a copy per delivery on the hot path; a message that
        was already published (re-sent or forwarded) is copied, so a message
        somebody holds never changes under them.
        """
        self._seq += 1
        if msg.seq == 0:
            fields = msg.__dict__
            fields["episode_id"] = self.episode_id
            fields["sender"] = sender
            fields["seq"] = self._seq
            return msg
        return msg.model_copy(
            update={"episode_id": self.episode_id, "sender": sender, "seq": self._seq}
        )

    async def publish(self, msg: Message, sender: str) -> Message:
        """Deliver ``msg`` to every subscriber of its type, in publish order.

        Waits while a subscriber's mailbox is full. Returns the stamped message.
        """
        stamped = self.stamp(msg, sender)
        if self._trace is not None:
            self._trace(stamped)
        route = self._route(type(msg))
        if not route:
            name = type(msg).__name__
            self.unhandled[name] = self.unhandled.get(name, 0) + 1
            return stamped
        env = Envelope(stamped)
        for sub in route:
            await sub.deliver(env)
        return stamped

    async def request(self, msg: Message, sender: str, *, timeout: float = 30.0) -> Message | None:
        """Send ``msg`` to the first subscriber of its type and wait for its reply.

        Raises :class:`NoHandler` when nobody handles the type and
        :class:`RequestTimeout` when no reply comes within ``timeout`` seconds.
        """
        route = self._route(type(msg))
        if not route:
            raise NoHandler(f"no actor handles requests of type {type(msg).__name__}")
        stamped = self.stamp(msg, sender)
        if self._trace is not None:
            self._trace(stamped)
        pending: Pending[Message] = Pending()
        try:
            async with asyncio.timeout(timeout):
                await route[0].deliver(Envelope(stamped, pending))
                await pending.done.wait()
        except TimeoutError:
            raise RequestTimeout(
                f"no reply to {type(msg).__name__} from {route[0].name!r} within {timeout:g}s"
            ) from None
        if pending.error is not None:
            raise pending.error
        return pending.value

    def close(self) -> None:
        for sub in self._subscribers:
            sub.mailbox.close()


def describe(msg: Message) -> dict[str, Any]:
    """A JSON-friendly view of a message for traces and the dashboard."""
    data = msg.model_dump(mode="json")
    data["type"] = type(msg).__name__
    return data
