"""One episode: an environment and a set of actors talking on one bus.

The episode owns everything it creates (bus, actors, mailboxes, tasks); when
it returns its :class:`~agentbus.core.outcome.Outcome`, all of it is gone. It ends
when the environment says the task is over, when the step limit is reached,
when its wall-clock timeout passes, when nothing can happen any more (every
mailbox empty and every actor idle: a stall), or when something raises: an
actor's ``on_start``, the environment's ``reset``, a handler, ``score``.

Every exception of an episode goes through one rule, :meth:`Episode._fail`:
an :class:`InfraError` becomes an ``infra`` ending (not counted, retried), a
:class:`ContextOverflow` the agent's own ``context_overflow`` (counted), any
other error an ``actor`` ending that names who failed doing what (not
counted, reported). So one failing episode never ends a run: ``run`` returns
an outcome for every ending but a cancellation from outside, which it lets
through after cleaning up. ``on_stop`` and ``close`` always run, shielded;
their failures are logged with the episode id and counted in the details.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from agentbus.core.actor import Actor, ActorContext, bad_return, wiring_problem
from agentbus.core.aio import MovableDeadline, shielded
from agentbus.core.bus import Bus, Envelope, Inbox, describe
from agentbus.core.calltrace import CallTrace
from agentbus.core.environment import Environment, Score, Task
from agentbus.core.environment_actor import EnvironmentActor
from agentbus.core.errors import ContextOverflow, InfraError
from agentbus.core.mailbox import MailboxClosed
from agentbus.core.messages import Message, TaskStarted
from agentbus.core.metering import MeteredLLM, Usage
from agentbus.core.outcome import ErrorKind, Outcome, kind_counts
from agentbus.core.refusals import PromptCopies, count_refusal
from agentbus.llm.queueing import QueueClock, start_clock, stop_clock
from agentbus.llm.types import LLM

ENV_ACTOR = "environment"
EPISODE_SENDER = "episode"
#: how long ``score`` may take before the episode ends as a timeout
SCORE_TIMEOUT_S = 60.0

log = structlog.get_logger(__name__)


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
        self._ended = asyncio.Event()
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

    def _fail(self, exc: BaseException, who: str, doing: str, *, replace: bool = False) -> None:
        """The one rule that turns an exception into the episode's ending.

        ``who`` failed ``doing`` something (``"actor 'critic'"``, ``"handling
        Feedback"``). An exception group (from a task group) is read as its
        first error. The first ending wins, as for every other way of ending,
        unless ``replace``: a failure to score replaces the ending it scored.
        """
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        if replace:
            self._ended.clear()
        if isinstance(exc, ContextOverflow):
            self._end(
                f"context overflow in {who.removeprefix('actor ')}: {exc}", "context_overflow"
            )
        elif isinstance(exc, InfraError):
            self._end(f"infrastructure: {exc}", "infra")
        else:
            self._end(f"{who} failed {doing}: {type(exc).__name__}: {exc}", "actor")

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
        problem = wiring_problem(bus, actors)
        if problem is not None:
            self._end(problem, "config")
        score_details: dict[str, Any] = {}
        reward, success = 0.0, False
        clock, clock_token = start_clock()
        try:
            if not self._ended.is_set():
                await self._drive(bus, env, actors, spec.task, max_steps, clock)
            if kind_counts(self._kind):
                score = await self._score(env)
                if score is not None:
                    reward, success, score_details = score.reward, score.success, score.details
                    if score.ending is not None and kind_counts(score.ending):
                        self._kind = score.ending  # the agent's own failure: counted, named apart
                        self._reason = score.reason or score.ending
        finally:
            stop_clock(clock_token)
            bus.close()
            cleanup_errors = await shielded(self._cleanup(actors, env))
            # drop the episode <-> subscriber links so the episode is freed by
            # reference counting the moment it returns, not by the cyclic collector
            for sub in self._subs:
                sub.wake = None
            self._subs.clear()
            self._actors.clear()
            self._consumers.clear()
            self._tg = None
        if cleanup_errors:
            score_details = {**score_details, "cleanup_errors": cleanup_errors}
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

    async def _score(self, env: Environment) -> Score | None:
        """Score the environment as it stands, or end the episode with why it could not be."""
        try:
            async with asyncio.timeout(SCORE_TIMEOUT_S) as limit:
                return await env.score()
        except TimeoutError as exc:
            if limit.expired():
                self._reason = f"timeout: scoring took longer than {SCORE_TIMEOUT_S:g}s"
                self._kind, self._error = "timeout", self._reason
            else:
                self._fail(exc, f"environment {env.name!r}", "scoring", replace=True)
        except Exception as exc:
            self._fail(exc, f"environment {env.name!r}", "scoring", replace=True)
        return None

    async def _cleanup(self, actors: Sequence[Actor], env: Environment) -> int:
        """Run every ``on_stop`` and the environment's ``close``; log what fails, with the episode.

        A failure here does not change the outcome (the task was decided
        before), but it may leave a sandbox or a file behind, so it is logged
        with the episode id and counted in the outcome's details.
        """
        problems: list[str] = []
        for actor in actors:
            try:
                await actor.on_stop()
            except Exception as exc:
                problems.append(f"actor {actor.name!r} on_stop: {type(exc).__name__}: {exc}")
        try:
            await env.close()
        except Exception as exc:
            problems.append(f"environment {env.name!r} close: {type(exc).__name__}: {exc}")
        for problem in problems:
            log.warning("episode cleanup failed", episode_id=self.spec.episode_id, problem=problem)
        return len(problems)

    async def _drive(
        self,
        bus: Bus,
        env: Environment,
        actors: Sequence[Actor],
        task: Task,
        max_steps: int,
        clock: QueueClock,
    ) -> None:
        """Start the actors, reset the environment and let the conversation run to its end.

        Everything here runs under the episode's own deadline; every error
        becomes the ending through :meth:`_fail`, so only a cancellation from
        outside leaves this method by an exception.
        """
        timeout = self.spec.timeout_s
        limit: asyncio.Timeout | None = None
        try:
            async with asyncio.timeout(None) as limit:
                if timeout is not None:
                    # the deadline moves out by the time spent waiting for a model slot
                    loop_now = asyncio.get_running_loop().time()
                    clock.bind(MovableDeadline(limit), loop_now + timeout)
                await self._converse(bus, env, actors, task, max_steps)
        except TimeoutError as exc:
            if limit is None or not limit.expired():
                self._fail(exc, f"environment {env.name!r}", "in reset")
            elif not self._ended.is_set():
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

    async def _converse(
        self, bus: Bus, env: Environment, actors: Sequence[Actor], task: Task, max_steps: int
    ) -> None:
        for actor in actors:
            try:
                await actor.on_start()
            except Exception as exc:
                self._fail(exc, f"actor {actor.name!r}", "starting")
                return
        try:
            observation = await env.reset(task)
            guide = env.guide(task)
        except TimeoutError:
            raise  # the deadline's, or reset's own: told apart by the caller
        except Exception as exc:
            self._fail(exc, f"environment {env.name!r}", "in reset")
            return
        self._copies.learn(guide, (task.instruction, observation.text))
        try:
            # The consumers live in a stdlib TaskGroup: an exception or a
            # cancellation of the episode cancels them all, at a third of the
            # cost per task start of anyio's, which an episode pays per actor.
            async with asyncio.TaskGroup() as tg:
                self._tg = tg
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
        except Exception as exc:  # the handlers catch their own: this is the bus itself
            self._fail(exc, "the episode", "delivering")

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
            if result is None:
                if envelope.reply is not None:
                    envelope.reply.set(None)
            elif isinstance(result, Message):
                if envelope.reply is not None:
                    envelope.reply.set(bus_stamp(actor, result))
                else:
                    await actor.publish(result)
            elif isinstance(result, list | tuple) and envelope.reply is None:
                for item in result:
                    if not isinstance(item, Message):
                        raise TypeError(bad_return(cls, method, item, "a list holding "))
                for item in result:
                    await actor.publish(item)
            else:
                raise TypeError(bad_return(cls, method, result, ""))
        except Exception as exc:
            if envelope.reply is not None:
                envelope.reply.fail(exc)
            self._fail(exc, f"actor {actor.name!r}", f"handling {type(msg).__name__}")


def bus_stamp(actor: Actor, msg: Message) -> Message:
    """Stamp a request's reply as sent by ``actor``."""
    return actor.ctx.bus.stamp(msg, actor.name)
