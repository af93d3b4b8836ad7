"""Every way an episode ends becomes one record of the right kind.

An exception in ``reset`` (an OS sandbox that will not start raises
InfraError there, expecting a retry), a handler returning several messages,
a handler returning something that is not a message, a failing ``on_stop`` or
``close``: each must end its own episode with a readable reason and leave the
other episodes of the runtime running.
"""

from __future__ import annotations

import asyncio

import anyio
import pytest
from structlog.testing import capture_logs

from agentbus.core.actor import Actor, on
from agentbus.core.demo import CountdownEnvironment, CounterActor, demo_tasks
from agentbus.core.environment import Score, Task
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.errors import ContextOverflow, InfraError
from agentbus.core.mailbox import Mailbox
from agentbus.core.messages import Observation, Thought
from agentbus.core.record import EpisodeRecord
from agentbus.executors.runtime import Runtime


class ResetFails(CountdownEnvironment):
    """A countdown whose reset raises the error its task names in ``data['raise']``."""

    async def reset(self, task: Task) -> Observation:
        error = task.data.get("raise")
        if error is not None:
            raise {"infra": InfraError, "value": ValueError, "overflow": ContextOverflow}[error](
                f"reset refused ({error})"
            )
        return await super().reset(task)


class CloseFails(CountdownEnvironment):
    async def close(self) -> None:
        raise OSError("sandbox would not go away")


class StopFails(CounterActor):
    async def on_stop(self) -> None:
        raise RuntimeError("could not flush")


def counter() -> ActorSpec:
    return ActorSpec("action", lambda: CounterActor(greedy=1.0))


def spec(i: int, env: type[CountdownEnvironment] = ResetFails, **data: str) -> EpisodeSpec:
    task = demo_tasks(i + 1)[i]
    task = task.model_copy(update={"data": {**task.data, **data}})
    return EpisodeSpec(f"ep-{i}", task, env, [counter()])


@pytest.mark.parametrize(
    ("error", "kind", "counts", "words"),
    [
        ("infra", "infra", False, "infrastructure: reset refused (infra)"),
        ("value", "actor", False, "environment 'demo' failed in reset: ValueError"),
        ("overflow", "context_overflow", True, "context overflow in environment 'demo'"),
    ],
)
async def test_reset_error_ends_only_its_episode(
    error: str, kind: str, counts: bool, words: str
) -> None:
    specs = [spec(i) for i in range(12)]
    specs[3] = spec(3, **{"raise": error})
    records: dict[str, EpisodeRecord] = {}

    async def keep(s: EpisodeSpec, rec: EpisodeRecord) -> None:
        records[s.episode_id] = rec

    runtime = Runtime(max_concurrency=4)
    with anyio.fail_after(30):
        assert await runtime.run(specs, keep) == 12
    failed = records["ep-3"].outcome
    assert failed.error_kind == kind
    assert words in failed.reason
    assert records["ep-3"].counts is counts and not failed.success
    others = [r.outcome for k, r in records.items() if k != "ep-3"]
    assert len(others) == 11 and all(o.error_kind is None and o.success for o in others)
    assert runtime.finished == 12


async def test_cleanup_failures_are_logged_with_the_episode() -> None:
    s = EpisodeSpec(
        "ep-clean", demo_tasks(1)[0], CloseFails, [ActorSpec("action", lambda: StopFails(1.0))]
    )
    with capture_logs() as logs:
        out = await Episode(s).run()
    assert out.success and out.error_kind is None  # the task itself was done
    problems = [e for e in logs if e.get("episode_id") == "ep-clean"]
    text = " ".join(str(e.get("problem")) for e in problems)
    assert "could not flush" in text and "sandbox would not go away" in text
    assert out.details["cleanup_errors"] == 2


class Chorus(Actor):
    """Answers the first observation with two thoughts at once."""

    publishes = (Thought,)

    @on(Observation)
    async def both(self, msg: Observation) -> list[Thought]:
        return [Thought(text="first"), Thought(text="second")]


class Listener(Actor):
    @on(Thought)
    async def hear(self, msg: Thought) -> None:
        self.ctx.metadata.setdefault("heard", []).append(msg.text)


class Mumbler(Actor):
    @on(Observation)
    async def speak(self, msg: Observation) -> str:
        return "not a message"


async def test_handler_returning_several_messages_publishes_all() -> None:
    s = EpisodeSpec(
        "ep-many",
        demo_tasks(1)[0],
        CountdownEnvironment,
        [counter(), ActorSpec("chorus", Chorus), ActorSpec("ear", Listener)],
        trace=True,
    )
    out = await Episode(s).run()
    assert out.trace is not None
    said = [m["text"] for m in out.trace if m["type"] == "Thought"]
    assert said == ["first", "second"]
    assert s.metadata["heard"] == ["first", "second"]


async def test_handler_returning_a_wrong_type_is_refused_loudly() -> None:
    s = EpisodeSpec("ep-str", demo_tasks(1)[0], CountdownEnvironment, [ActorSpec("odd", Mumbler)])
    with anyio.fail_after(10):
        out = await Episode(s).run()
    assert out.error_kind == "actor"
    assert out.error is not None
    assert "'odd'" in out.error and "returned str" in out.error


async def test_mailbox_hands_on_a_wake_up_when_the_woken_sender_is_cancelled() -> None:
    box: Mailbox[int] = Mailbox(maxsize=1)
    await box.put(0)
    first = asyncio.ensure_future(box.put(1))
    second = asyncio.ensure_future(box.put(2))
    await asyncio.sleep(0)  # both senders now wait for room
    assert box.pop_nowait() == 0  # room for one: the first sender is woken ...
    first.cancel()  # ... and cancelled before it runs
    with anyio.fail_after(2):  # the wake-up must reach the second sender
        await second
    assert first.cancelled() and box.pop_nowait() == 2


class SlowToStop(CounterActor):
    """Never answers; its on_stop takes a few event-loop turns (a sandbox going down)."""

    stopped: list[str] = []

    @on(Observation)
    async def wait(self, msg: Observation) -> None:
        await anyio.sleep(30)

    async def on_stop(self) -> None:
        await anyio.sleep(0.05)
        SlowToStop.stopped.append(self.name)


async def test_cancelled_episode_still_runs_its_cleanup() -> None:
    SlowToStop.stopped.clear()
    s = EpisodeSpec(
        "ep-cancel", demo_tasks(1)[0], CountdownEnvironment, [ActorSpec("a", SlowToStop)]
    )
    with anyio.move_on_after(0.1) as scope:
        await Episode(s).run()
    assert scope.cancelled_caught  # the cancellation went through ...
    assert SlowToStop.stopped == ["a"]  # ... after on_stop ran to its end


class ScoreFails(CountdownEnvironment):
    async def score(self) -> Score:
        raise InfraError("grader unreachable")


class StartFails(CounterActor):
    async def on_start(self) -> None:
        raise ValueError("no config")


@pytest.mark.parametrize(
    ("env", "actor", "kind", "words"),
    [
        (ScoreFails, CounterActor, "infra", "infrastructure: grader unreachable"),
        (CountdownEnvironment, StartFails, "actor", "actor 'action' failed starting: ValueError"),
    ],
)
async def test_scoring_and_starting_errors_end_the_episode_by_the_same_rule(
    env: type[CountdownEnvironment], actor: type[CounterActor], kind: str, words: str
) -> None:
    s = EpisodeSpec("ep-x", demo_tasks(1)[0], env, [ActorSpec("action", lambda: actor(1.0))])
    out = await Episode(s).run()
    assert out.error_kind == kind and words in out.reason
    assert not out.counts_for_value and out.reward == 0.0
