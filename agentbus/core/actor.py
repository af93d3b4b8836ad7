"""Actors: the modules of an agent, each with its own mailbox.

A module is a subclass of :class:`Actor` whose handlers are declared per
message type with :func:`on`. The episode gives every actor a context (its bus,
its LLM handle, its slot name and the episode's metadata) before starting it.
An actor handles one message at a time, in the order they were published to it.
A handler that returns a message answers a ``request``; for a plain publish
the return value is published on the bus (a convenient way to chain stages),
and a returned list publishes each of its messages in order. Any other return
value ends the episode with an ``actor`` error naming the handler.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from agentbus.core.bus import Bus
from agentbus.core.messages import Message
from agentbus.llm.types import LLM

M = TypeVar("M", bound=Message)
Handler = Callable[[Any, Any], Awaitable[Message | Sequence[Message] | None]]
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

_HANDLES_ATTR = "__agentbus_handles__"


def on(*types: type[Message]) -> Callable[[F], F]:
    """Declare the decorated coroutine method as the handler for ``types``."""
    if not types:
        raise TypeError("@on needs at least one message type")

    def mark(fn: F) -> F:
        setattr(fn, _HANDLES_ATTR, types)
        return fn

    return mark


@dataclass
class ActorContext:
    """What an actor can reach: its bus, its model and the episode it is in."""

    bus: Bus
    name: str
    slot: str
    llm: LLM | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class Actor:
    """Base class for agent modules.

    Subclasses declare handlers with :func:`on` and list the message types they
    publish in ``publishes``; the episode checks at start that each of those
    types has a receiver, so a wiring mistake is reported instead of lost.
    """

    publishes: ClassVar[tuple[type[Message], ...]] = ()
    mailbox_size: ClassVar[int] = 64
    _handlers: ClassVar[dict[type[Message], str]] = {}
    _dispatch: ClassVar[dict[type[Message], str | None]] = {}

    ctx: ActorContext

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        handlers: dict[type[Message], str] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                for t in getattr(value, _HANDLES_ATTR, ()):
                    handlers[t] = attr
        cls._handlers = handlers
        cls._dispatch = {}

    @classmethod
    def handled_types(cls) -> tuple[type[Message], ...]:
        return tuple(cls._handlers)

    @classmethod
    def handler_for(cls, msg_type: type[Message]) -> str | None:
        """Name of the method handling ``msg_type``: the most specific match wins."""
        try:
            return cls._dispatch[msg_type]
        except KeyError:
            name = None
            for base in msg_type.__mro__:
                if base in cls._handlers:
                    name = cls._handlers[base]
                    break
            cls._dispatch[msg_type] = name
            return name

    def bind(self, ctx: ActorContext) -> None:
        self.ctx = ctx

    @property
    def name(self) -> str:
        return self.ctx.name

    @property
    def llm(self) -> LLM:
        if self.ctx.llm is None:
            raise RuntimeError(f"actor {self.ctx.name!r} was given no LLM")
        return self.ctx.llm

    def slot_off(self, slot: str) -> bool:
        """Whether ``slot`` is switched off in this episode (no actor, no LLM calls).

        A coalition over implementations can skip a component (its variant is
        ``off``, see :mod:`agentbus.core.variants`); the episode's ``assignment``
        metadata then maps that slot to ``"off"``. Modules that would wait for
        the skipped component (a critique, a plan) ask here and go on without
        it. Without assignment metadata (an episode built by hand) nothing is off.
        """
        assignment = self.ctx.metadata.get("assignment") or {}
        return bool(assignment.get(slot) == "off")

    async def publish(self, msg: Message) -> Message:
        """Publish ``msg`` as this actor; returns the stamped copy."""
        return await self.ctx.bus.publish(msg, self.ctx.name)

    async def request(self, msg: Message, *, timeout: float = 30.0) -> Message | None:
        """Send ``msg`` to its handler and wait for the reply."""
        return await self.ctx.bus.request(msg, self.ctx.name, timeout=timeout)

    async def on_start(self) -> None:
        """Called once before the first message is delivered."""

    async def on_stop(self) -> None:
        """Called once when the episode ends, even after a failure."""


def wiring_problem(bus: Bus, actors: Sequence[Actor]) -> str | None:
    """Report actors that can never run and messages nobody would receive.

    ``actors[0]`` is the environment's actor, which may publish to nobody.
    """
    for actor in actors[1:]:
        if not actor.handled_types():
            return f"wiring: actor {actor.name!r} subscribes to no message type"
        for t in actor.publishes:
            if not bus.handles(t):
                return (
                    f"wiring: actor {actor.name!r} publishes {t.__name__} "
                    "but no actor in this episode handles it"
                )
    return None


def bad_return(cls: type[Actor], method: str, value: object, holding: str) -> str:
    """Why a handler's return value cannot be published (a request takes one reply)."""
    return (
        f"{cls.__name__}.{method} returned {holding}{type(value).__name__}; a handler returns "
        "None, a Message or (not for a request) a list of Messages"
    )
