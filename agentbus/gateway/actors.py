"""The actors of an external agent's episode: one per slot, and the driver.

An external agent's modules are not actors here: they are the agent's own
code, calling the gateway. What the episode holds for them is, per slot that
is on, a :class:`GatewaySlot`: it owns the slot's metered model client (so the
episode counts each slot's calls, tokens and cost the same way as for native
modules) and hands it to the gateway session; it also receives the gateway's
messages, so they are delivered rather than reported as unhandled. The
:class:`AgentDriver` opens the gateway session when the task starts, runs the
agent (callable, command or service) and proposes its result to the
environment as the one action of the episode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from agentbus.core.actor import Actor, on
from agentbus.core.errors import InfraError
from agentbus.core.messages import ActionProposed, Feedback, Observation, TaskStarted
from agentbus.core.outcome import is_agent_failure
from agentbus.gateway.deadline import agent_clock
from agentbus.gateway.machine import saturation
from agentbus.gateway.messages import GatewayMessage
from agentbus.gateway.runners import AgentFailed, AgentRunner
from agentbus.gateway.server import Gateway
from agentbus.gateway.session import Session
from agentbus.llm.queueing import FanClock, QueueClock, episode_clock
from agentbus.llm.types import LLM

OFF = "off"
DRIVER = "agent"


@dataclass
class EpisodeLink:
    """What the slot actors of one episode hand to its driver (one per episode spec)."""

    llms: dict[str, LLM] = field(default_factory=dict)


class GatewaySlot(Actor):
    """Holds one slot's model for the gateway; the gateway's calls are its calls."""

    mailbox_size = 256

    def __init__(self, link: EpisodeLink | None = None) -> None:
        self.link = link if link is not None else EpisodeLink()

    async def on_start(self) -> None:
        if self.ctx.llm is not None:
            self.link.llms[self.ctx.slot] = self.ctx.llm

    @on(GatewayMessage)
    async def seen(self, msg: GatewayMessage) -> None:
        return None


#: the phrases runners open their failure messages with, by the kind they name;
#: a cap is named by the word (the sandbox's "stdout cap of N bytes exceeded")
_PHRASES = re.compile(
    r"(?P<agent_timeout>ran past its time limit|timed out)"
    r"|(?P<agent_no_result>printed no JSON|not a result object|has neither|invalid JSON"
    r"|no result)"
    r"|(?P<agent_cap>\bcaps?\b|too (?:large|long|much))"
    r"|(?P<agent_crash>exited with status|raised|cannot start|answered HTTP|killed|signal)",
    re.IGNORECASE,
)


def failure_kind(exc: Exception, session: Session) -> str:
    """Which of :data:`~agentbus.core.outcome.AGENT_FAILURES` a runner's failure is.

    A runner may say so itself (a ``kind`` attribute); otherwise the earliest
    known phrase of its message decides: what follows the runner's own words
    quotes the agent's stderr or exception, which could say anything. A crash
    or a missing result in an episode where the gateway refused a call is put
    down to the refusal: that is what the user has to change.
    """
    given = getattr(exc, "kind", None)
    if is_agent_failure(given):
        return str(given)
    found = _PHRASES.search(str(exc))
    kind = found.lastgroup if found is not None and found.lastgroup else "agent_crash"
    if kind in ("agent_crash", "agent_no_result") and session.refused_calls():
        return "agent_refused"
    return kind


def timeout_note(message: str, waited_s: float) -> dict[str, Any]:
    """A time-out's message with what the limit left out, and whether the machine was saturated.

    A limit hit while more runnable processes than CPUs were queued (the
    one-minute load average) is most likely the machine's doing, not the
    agent's: the message says so in one line, with the remedy, and
    ``saturated`` marks it for the run's summary.
    """
    out: dict[str, Any] = {}
    if waited_s >= 0.5:
        message += f" (not counting {waited_s:.0f}s its calls waited for a model slot)"
    busy = saturation()
    if busy is not None:
        out["saturated"] = busy
        message += (
            f"; the machine was saturated ({busy}): run fewer agents at once "
            "(--agent-processes) or raise --agent-timeout"
        )
    out["error"] = message
    return out


@dataclass
class DriverConfig:
    """What every driver of a run shares: the gateway, the runner and the fallback."""

    gateway: Gateway
    runner: AgentRunner
    #: (model spec, client) for modules that are no slot; None refuses them
    fallback: tuple[str, LLM] | None = None
    slots: tuple[str, ...] = ()


class AgentDriver(Actor):
    """Runs the external agent once the task is shown, then proposes its result."""

    publishes = (ActionProposed,)

    def __init__(self, config: DriverConfig, link: EpisodeLink) -> None:
        self.config = config
        self.link = link
        self.started: TaskStarted | None = None

    @on(TaskStarted)
    async def task(self, msg: TaskStarted) -> None:
        self.started = msg

    @on(Observation)
    async def observed(self, msg: Observation) -> None:
        started = self.started
        if started is None:
            return
        assignment: dict[str, Any] = self.ctx.metadata.get("assignment") or {}
        off = frozenset(s for s, m in assignment.items() if m == OFF)
        slots = {s: (str(assignment.get(s, "")), llm) for s, llm in self.link.llms.items()}
        session = Session(
            episode_id=self.ctx.bus.episode_id,
            task_id=started.task_id,
            slots=slots,
            off=off,
            bus=self.ctx.bus,
            fallback=self.config.fallback,
            all_slots=self.config.slots or tuple(assignment),
        )
        waits = QueueClock()  # the agent's own: its limit leaves these waits out
        episode = episode_clock()
        session.clock = FanClock(waits, *([episode] if episode is not None else []))
        gateway = self.config.gateway
        ctx = gateway.open(session)
        shown = msg.data.get("task")  # the environment says what the agent may see
        task = dict(shown) if isinstance(shown, dict) else {"id": started.task_id}
        outcome: dict[str, Any]
        try:
            with agent_clock(waits):
                result = await self.config.runner.run(task, ctx)
            outcome = {"result": result}
        except AgentFailed as exc:
            kind = failure_kind(exc, session)
            outcome = {"error": str(exc), "kind": kind}
            if kind == "agent_timeout":
                outcome.update(timeout_note(str(exc), waits.waited_s))
        finally:
            gateway.close(session)
        if session.violation is not None:  # past a gateway cap: the agent's failure
            outcome = {"error": session.violation, "kind": "agent_cap"}
        if session.infra_error is not None:
            raise InfraError(f"gateway call failed upstream: {session.infra_error}")
        outcome["gateway"] = session.summary()
        await self.publish(ActionProposed(text=orjson.dumps(outcome).decode()))

    @on(Feedback)
    async def scored(self, msg: Feedback) -> None:
        return None  # the verdict: the episode ends with it


__all__ = ["AgentDriver", "DriverConfig", "EpisodeLink", "GatewaySlot", "failure_kind"]
