"""One episode's registration with the gateway: its token, its modules and what they did.

The token is the only thing that finds an episode: a request with a token the
gateway does not hold (never issued, or its episode has ended) is refused. A
request's ``model`` field names the module; :meth:`Session.route` maps it to
the slot of the same name and that slot's model in this episode's coalition,
refuses it when the slot is switched off, and sends a module that is no slot
to the run's fallback model or refuses it, as configured.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agentbus.core.bus import Bus
from agentbus.gateway.messages import GatewayAnswer, GatewayMessage, GatewayRequest
from agentbus.llm.queueing import QueueClock, using_clock
from agentbus.llm.types import LLM, ChatMessage, Completion, SamplingParams

#: the sender of the gateway's messages on an episode's bus
SENDER = "gateway"


@dataclass
class Route:
    """Where one module's call goes: its slot (None for the fallback), model and client."""

    module: str
    slot: str | None
    model: str
    llm: LLM


class Refused(Exception):
    """A call the gateway will not make; the message is what the agent reads."""

    def __init__(self, message: str, status: int, kind: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


class ClockedLLM:
    """A client whose calls report their waits for a model slot to an episode's clock.

    The gateway answers a user's agent from its own request handler, outside
    the episode's task, where the LLM layer cannot find the episode's clock;
    this wrapper hands it over for the duration of each call. Every other
    attribute is the wrapped client's.
    """

    def __init__(self, inner: LLM, clock: QueueClock) -> None:
        self._wrapped = inner
        self._clock = clock

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        with using_clock(self._clock):
            return await self._wrapped.complete(messages, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)


@dataclass
class ModuleStats:
    """Calls, tokens and time of one module in one episode (discovery and the record)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    refused: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "latency_s": round(self.latency_s, 4)}


@dataclass
class Session:
    """An episode while its agent runs: token, routes, bus and per-module statistics."""

    episode_id: str
    task_id: str
    #: slot -> (model spec, metered client) for every slot that is on in this episode
    slots: dict[str, tuple[str, LLM]]
    off: frozenset[str]
    bus: Bus | None = None
    #: model and client for modules that are no slot (None: refuse them)
    fallback: tuple[str, LLM] | None = None
    #: every slot of the agent, on or off (for messages naming what exists)
    all_slots: tuple[str, ...] = ()
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    sid: str = field(default_factory=lambda: secrets.token_hex(6))
    modules: dict[str, ModuleStats] = field(default_factory=dict)
    #: the first infrastructure failure of a call (the episode does not count then)
    infra_error: str | None = None
    #: where the calls' waits for a model slot are reported (the episode's and the
    #: agent's clocks: neither time limit counts them; see gateway/deadline.py)
    clock: QueueClock | None = None
    #: the first cap the agent went past (gateway.limits); the episode is then its failure
    violation: str | None = None
    #: ids of the Responses API answers this episode got (its own previous_response_id)
    response_ids: set[str] = field(default_factory=set)
    calls: int = 0

    def stats(self, module: str) -> ModuleStats:
        found = self.modules.get(module)
        if found is None:
            found = self.modules[module] = ModuleStats()
        return found

    def count(self, module: str, prompt_tokens: int, completion_tokens: int, took_s: float) -> None:
        """Count one answered call of ``module`` (its tokens and the seconds it took)."""
        stats = self.stats(module)
        stats.calls += 1
        stats.prompt_tokens += prompt_tokens
        stats.completion_tokens += completion_tokens
        stats.latency_s += took_s

    def route(self, module: str) -> Route:
        """The slot and model for ``module``, or :class:`Refused` with the reason."""
        slot = self.slots.get(module)
        if slot is not None:
            return Route(module, module, slot[0], self._clocked(slot[1]))
        if module in self.off:
            self.stats(module).refused += 1
            raise Refused(
                f"module {module!r} is switched off in this episode; "
                "the agent must do without it (its off modules are in AGENTBUS_OFF_SLOTS)",
                403,
                "module_off",
            )
        if self.fallback is not None:
            return Route(module, None, self.fallback[0], self._clocked(self.fallback[1]))
        self.stats(module).refused += 1
        known = ", ".join(self.all_slots) or "none"
        raise Refused(
            f"model {module!r} names no module of this run (modules: {known}); set the "
            "component's model name to one of them, or give the run a fallback model "
            "for unmapped modules (--unmapped MODEL)",
            404,
            "unknown_module",
        )

    async def publish(self, msg: GatewayMessage) -> None:
        """Put ``msg`` on the episode's bus, when it has one and is still running."""
        if self.bus is None:
            return
        with contextlib.suppress(Exception):  # the episode ended while the call was in flight
            await self.bus.publish(msg, SENDER)

    async def requested(self, route: Route, **fields: Any) -> int:
        """Number a routed call and publish its :class:`GatewayRequest`; returns the number."""
        self.calls += 1
        number = self.calls
        await self.publish(
            GatewayRequest(
                call=number, module=route.module, slot=route.slot, model=route.model, **fields
            )
        )
        return number

    async def answered(self, route: Route, number: int, **fields: Any) -> None:
        """Publish the :class:`GatewayAnswer` to call ``number`` (an answer or its error)."""
        await self.publish(
            GatewayAnswer(
                call=number, module=route.module, slot=route.slot, model=route.model, **fields
            )
        )

    async def refused_call(self, module: str, error: str) -> None:
        """Number a call that was refused before any routing and publish why."""
        self.calls += 1
        await self.publish(GatewayAnswer(call=self.calls, module=module, error=error))

    def _clocked(self, llm: LLM) -> LLM:
        return llm if self.clock is None else ClockedLLM(llm, self.clock)

    def refused_calls(self) -> int:
        """Calls the gateway refused in this episode (switched-off or unknown modules)."""
        return sum(s.refused for s in self.modules.values())

    def summary(self) -> dict[str, Any]:
        """Per-module statistics for the episode's record (``details.gateway``)."""
        out: dict[str, Any] = {"modules": {m: s.to_dict() for m, s in self.modules.items()}}
        refused = {m: s.refused for m, s in self.modules.items() if s.refused}
        if refused:
            out["refused"] = refused
        unknown = sorted(m for m in self.modules if m not in self.slots and m not in self.off)
        if unknown and self.fallback is not None:
            out["unmapped"] = unknown  # answered by the run's fallback model
        elif unknown:
            out["unknown"] = unknown  # no fallback: every such call was refused
        return out


__all__ = ["ClockedLLM", "ModuleStats", "Refused", "Route", "Session"]
