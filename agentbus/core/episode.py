"""One episode: an environment and a set of actors talking on one bus.

The episode owns everything it creates (bus, actors, mailboxes, tasks); when
it returns its :class:`~agentbus.core.outcome.Outcome`, all of it is gone. It ends
when the environment says the task is over, when the step limit is reached,
when its wall-clock timeout passes, when a handler raises, or when nothing can
happen any more (every mailbox empty and every actor idle: a stall). Each way
of ending gives a distinct, readable reason in the outcome.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from agentbus.calltrace import CallTrace
from agentbus.core.actor import Actor, ActorContext
from agentbus.core.bus import Bus, Envelope, Inbox, describe
from agentbus.core.environment import Environment, Task
from agentbus.core.environment_actor import EnvironmentActor
from agentbus.core.mailbox import MailboxClosed
from agentbus.core.messages import Message, TaskStarted
from agentbus.core.metering import MeteredLLM, Usage
from agentbus.core.outcome import ErrorKind, Outcome, kind_counts
from agentbus.errors import ContextOverflow, InfraError
from agentbus.llm.queueing import QueueClock, start_clock, stop_clock
from agentbus.llm.types import LLM
from agentbus.refusals import PromptCopies, count_refusal

ENV_ACTOR = "environment"
EPISODE_SENDER = "episode"


@dataclass
class ActorSpec:
    """How to build one actor for one episode: its slot, class factory and model."""

    slot: str
    factory: Callable[[], Actor]
    llm: LLM | None = None
    name: str | None = None


@dataclass
class EpisodeSpec:
    """Everything needed to run one episode; cheap to create by the thousand."""

    episode_id: str
    task: Task
    env_factory: Callable[[], Environment]
    actors: Sequence[ActorSpec]
    max_steps: int | None = None
    timeout_s: float | None = 600.0
    metadata: dict[str, Any] = field(default_factory=dict)
    trace: bool = False
    #: which try at this episode id this is (retries and resumes count up)
    attempt: int = 1
    #: ordinal of the scheduling block the episode belongs to (honest live estimates)
    block: int | None = None


class Episode:
    """Runs one :class:`EpisodeSpec` to an :class:`Outcome`."""

    def __init__(self, spec: EpisodeSpec) -> None:
        self.spec = spec
        self._ended = anyio.Event()
        self._reason = "done"
        self._error: str | None = None
        self._kind: ErrorKind | None = None
        self._active = 0
        self._subs: list[Inbox] = []
        self._actors: dict[Inbox, Actor] = {}
        self._tg: asyncio.TaskGroup | None = None
        self._consumers: dict[Inbox, asyncio.Task[None]] = {}
        self._copies = PromptCopies()

    def _end(self, reason: str, kind: ErrorKind | None = None, error: str | None = None) -> None:
        if self._ended.is_set():
            return
        self._reason = reason
        self._kind = kind
        self._error = error if error is not None else (reason if kind else None)
        self._ended.set()

    async def run(self) -> Outcome:
        spec = self.spec
        started = time.perf_counter()
        usage = Usage()
        trace: list[dict[str, Any]] | None = [] if spec.trace else None
        bus = Bus(
            spec.episode_id,
            trace=(lambda m: trace.append(describe(m))) if trace is not None else None,
        )
        calls = CallTrace(trace) if trace is not None else None
        env = spec.env_factory()
        max_steps = spec.max_steps or env.default_max_steps
        assignment = spec.metadata.get("assignment")
        slot_of = {a.name or a.slot: a.slot for a in spec.actors}

        def refused(sender: str, kind: str, reason: str) -> None:
            slot = slot_of.get(sender)
            if slot is not None:
                model = str(assignment.get(slot, "")) if isinstance(assignment, dict) else ""
                count_refusal(usage.slot(slot, model), kind, reason)

        env_actor = EnvironmentActor(env, max_steps, self._end, refused)
        self._copies = env_actor.copies
        env_actor.bind(ActorContext(bus, ENV_ACTOR, ENV_ACTOR, None, spec.metadata))
        actors: list[Actor] = [env_actor]
        for a in spec.actors:
            actor = a.factory()
            llm = None
            if a.llm is not None:
                model = str(assignment.get(a.slot, "")) if isinstance(assignment, dict) else ""
                llm = MeteredLLM(a.llm, usage, usage.slot(a.slot, model), calls=calls, name=a.slot)
            actor.bind(ActorContext(bus, a.name or a.slot, a.slot, llm, spec.metadata))
            actors.append(actor)
        for actor in actors:
            sub = bus.subscribe(actor.name, actor.handled_types(), mailbox_size=actor.mailbox_size)
            sub.wake = self._wake
            self._subs.append(sub)
            self._actors[sub] = actor
        problem = self._wiring_problem(bus, actors)
        if problem is not None:
            self._end(problem, "config")
        score_details: dict[str, Any] = {}
        reward, success = 0.0, False
        clock, clock_token = start_clock()
        try:
            if not self._ended.is_set():
                await self._drive(bus, env, actors, spec.task, max_steps, clock)
            if kind_counts(self._kind):
                with anyio.fail_after(60):
                    score = await env.score()
                reward, success, score_details = score.reward, score.success, score.details
                if score.ending is not None and kind_counts(score.ending):
                    self._kind = score.ending  # the agent's own failure: counted, named apart
                    self._reason = score.reason or score.ending
        except ContextOverflow as exc:  # raised outside a handler (reset, score)
            self._end(f"context overflow: {exc}", "context_overflow")
        except InfraError as exc:
            self._end(f"infrastructure: {exc}", "infra", f"infrastructure: {exc}")
            self._reason, self._kind = f"infrastructure: {exc}", "infra"
        except TimeoutError:
            self._reason, self._kind = "timeout: scoring took longer than 60s", "timeout"
            self._error = self._reason
        finally:
            stop_clock(clock_token)
            bus.close()
            with anyio.CancelScope(shield=True):
                for actor in actors:
                    try:
                        await actor.on_stop()
                    except Exception:
                        pass
                try:
                    await env.close()
                except Exception:
                    pass
        # drop the episode <-> subscriber links so the episode is freed by
        # reference counting the moment it returns, not by the cyclic collector
        for sub in self._subs:
            sub.wake = None
        self._subs.clear()
        self._actors.clear()
        self._consumers.clear()
        self._tg = None
        if bus.unhandled:
            score_details = {**score_details, "unhandled_messages": dict(bus.unhandled)}
        counts = kind_counts(self._kind)
        if clock.waited_s >= 0.01:
            score_details = {**score_details, "model_queue_s": round(clock.waited_s, 3)}
        return Outcome(
            reward=reward if counts else 0.0,
            success=success if counts else False,
            steps=env_actor.steps,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            llm_calls=usage.calls,
            usage=usage.slots,
            latency_s=time.perf_counter() - started,
            reason=self._reason,
            error=None if counts else self._error,
            error_kind=self._kind,
            details=score_details,
            trace=trace,
        )

    @staticmethod
    def _wiring_problem(bus: Bus, actors: Sequence[Actor]) -> str | None:
        """Report actors that can never run and messages nobody would receive."""
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

    async def _drive(
        self,
        bus: Bus,
        env: Environment,
        actors: Sequence[Actor],
        task: Task,
        max_steps: int,
        clock: QueueClock,
    ) -> None:
        timeout = self.spec.timeout_s
        with anyio.CancelScope() as scope:
            if timeout is not None:
                # the deadline moves out by the time spent waiting for a model slot
                clock.bind(scope, anyio.current_time() + timeout)
            # The consumers live in a stdlib TaskGroup: structured like anyio's
            # (an outer cancel scope cancels them all), at a third of the cost per
            # task start, which an episode pays once per actor.
            async with asyncio.TaskGroup() as tg:
                for actor in actors:
                    await actor.on_start()
                self._tg = tg
                observation = await env.reset(task)
                guide = env.guide(task)
                self._copies.learn(guide, (task.instruction, observation.text))
                await bus.publish(
                    TaskStarted(
                        task_id=task.id,
                        instruction=task.instruction,
                        env=env.name,
                        max_steps=max_steps,
                        info=task.data,
                        guide=guide,
                        action_format=env.action_format,
                    ),
                    EPISODE_SENDER,
                )
                await bus.publish(observation, ENV_ACTOR)
                self._check_stall()
                await self._ended.wait()
                self._stop_consumers()
        if scope.cancelled_caught and not self._ended.is_set():
            queued = (
                f" (not counting {clock.waited_s:.0f}s it queued for a model or sandbox slot)"
                if clock.waited_s >= 1
                else ""
            )
            self._end(
                f"timeout: episode exceeded {timeout:g}s of its own time{queued}; "
                "allow more with --episode-timeout",
                "timeout",
            )

    def _stop_consumers(self) -> None:
        """End every consumer: a parked one by closing its mailbox, a busy one by cancelling.

        Closing lets a parked consumer return normally; cancelling it would
        leave a CancelledError with its traceback (a reference cycle) per
        actor per episode, garbage only the cyclic collector can free, and
        with thousands of episodes in flight its full collections cost more
        than the episodes themselves (``benchmarks/vs_autogen.py``).
        """
        for sub, consumer in self._consumers.items():
            if sub.mailbox.reader_waiting:
                sub.mailbox.close()
            else:
                consumer.cancel()

    def _check_stall(self) -> None:
        if self._active == 0 and not self._ended.is_set():
            for sub in self._subs:
                if sub.mailbox:
                    return
            self._end(
                "stalled: every actor is idle and no message is pending, "
                "but the episode has not ended",
                "actor",
            )

    def _wake(self, sub: Inbox) -> None:
        """The first message reached an actor: start the consumer of its mailbox.

        The consumer is started lazily, so an actor that never receives
        anything (and every actor of an episode still waiting for its first
        model answer) holds no task. Once started it stays until the episode
        ends, parked on its empty mailbox between messages: starting a task
        per message cost more than all the rest of a delivery (profile of
        ``benchmarks/vs_autogen.py``), and a parked consumer is only a few
        hundred bytes more than none.
        """
        if self._tg is None or self._ended.is_set():
            sub.active = False
            return
        self._active += 1
        self._consumers[sub] = self._tg.create_task(self._drain(self._actors[sub], sub))

    async def _drain(self, actor: Actor, sub: Inbox) -> None:
        """Handle the actor's messages one at a time, in order, until the episode ends.

        ``_active`` counts consumers that are handling (or about to handle) a
        message; one parked on an empty mailbox is idle, which is what the
        stall check needs to know.
        """
        cls = type(actor)
        mailbox = sub.mailbox
        ended = self._ended
        busy = True
        try:
            while not ended.is_set():
                if not len(mailbox):
                    busy = False
                    self._active -= 1
                    self._check_stall()
                    if ended.is_set():
                        return
                    try:
                        envelope = await mailbox.get()
                    except MailboxClosed:
                        return
                    self._active += 1
                    busy = True
                else:
                    envelope = mailbox.pop_nowait()
                await self._handle(actor, cls, envelope)
        finally:
            if busy:
                self._active -= 1

    async def _handle(self, actor: Actor, cls: type[Actor], envelope: Envelope) -> None:
        msg = envelope.message
        try:
            method = cls.handler_for(type(msg))
            if method is None:  # subscribed through a base type without a handler
                return
            result = await getattr(actor, method)(msg)
            if envelope.reply is not None:
                envelope.reply.set(
                    bus_stamp(actor, result) if isinstance(result, Message) else None
                )
            elif isinstance(result, Message):
                await actor.publish(result)
        except ContextOverflow as exc:
            if envelope.reply is not None:
                envelope.reply.fail(exc)
            self._end(f"context overflow in {actor.name!r}: {exc}", "context_overflow")
        except InfraError as exc:
            if envelope.reply is not None:
                envelope.reply.fail(exc)
            self._end(f"infrastructure: {exc}", "infra")
        except Exception as exc:
            if envelope.reply is not None:
                envelope.reply.fail(exc)
            self._end(
                f"actor {actor.name!r} failed handling {type(msg).__name__}: "
                f"{type(exc).__name__}: {exc}",
                "actor",
            )


def bus_stamp(actor: Actor, msg: Message) -> Message:
    """Stamp a request's reply as sent by ``actor``."""
    return actor.ctx.bus.stamp(msg, actor.name)


# MeteredLLM, Usage and EnvironmentActor live in their own modules now and stay
# importable from here
__all__ = ["ActorSpec", "EnvironmentActor", "Episode", "EpisodeSpec", "MeteredLLM", "Usage"]
