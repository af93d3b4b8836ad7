"""Episodes and the runtime: outcomes, failure semantics, concurrency."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from agentbus.core.actor import Actor, on
from agentbus.core.demo import CountdownEnvironment, CounterActor, demo_tasks
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.events import EPISODE_ENDED, EventHub
from agentbus.core.messages import ActionProposed, Feedback, Message, Observation, Thought
from agentbus.core.record import EpisodeRecord
from agentbus.executors.runtime import Runtime


def spec(i: int, *actors: ActorSpec, **kw: object) -> EpisodeSpec:
    task = demo_tasks(i + 1)[i]
    return EpisodeSpec(f"ep-{i}", task, CountdownEnvironment, list(actors), **kw)  # type: ignore[arg-type]


def counter(greedy: float = 1.0) -> ActorSpec:
    return ActorSpec("action", lambda: CounterActor(greedy=greedy))


class Exploder(Actor):
    """Raises on the first feedback it sees."""

    @on(Feedback)
    async def boom(self, msg: Feedback) -> None:
        raise ValueError("kaboom")


class Idler(Actor):
    """Handles observations by doing nothing: the episode can never end."""

    @on(Observation)
    async def ignore(self, msg: Observation) -> None:
        return None


class Sleeper(Actor):
    """Answers the observation very slowly."""

    @on(Observation)
    async def slow(self, msg: Observation) -> ActionProposed:
        await anyio.sleep(30)
        return ActionProposed(text="1")


class Deaf(Actor):
    """Subscribes to nothing."""


class Shouter(Actor):
    """Declares a message type nobody else handles."""

    publishes = (Thought,)

    @on(Observation)
    async def go(self, msg: Observation) -> Thought:
        return Thought(text="anyone?")


class Undecided(Actor):
    """Always proposes an action that does not change the game."""

    @on(Observation, Feedback)
    async def act(self, msg: Message) -> ActionProposed:
        return ActionProposed(text="7")


async def test_episode_runs_to_success_with_trace() -> None:
    out = await Episode(spec(0, counter(), trace=True)).run()
    assert out.error is None and out.reason == "done"
    assert out.success and out.reward == 1.0
    assert out.steps >= 2
    assert out.trace is not None
    types = [m["type"] for m in out.trace]
    assert types[:2] == ["TaskStarted", "Observation"]
    assert "ActionProposed" in types and "Feedback" in types
    assert [m["seq"] for m in out.trace] == sorted(m["seq"] for m in out.trace)


async def test_handler_exception_names_actor_and_message_type() -> None:
    out = await Episode(spec(0, counter(), ActorSpec("critic", Exploder))).run()
    assert out.error_kind == "actor"
    assert out.error is not None
    assert "'critic'" in out.error and "Feedback" in out.error and "kaboom" in out.error
    assert not out.counts_for_value


async def test_runtime_goes_on_after_one_episode_fails() -> None:
    specs = [spec(i, counter()) for i in range(20)]
    specs[5] = spec(5, counter(), ActorSpec("critic", Exploder))
    results: dict[str, str | None] = {}

    async def record(s: EpisodeSpec, rec: EpisodeRecord) -> None:
        results[s.episode_id] = rec.outcome.error_kind
        assert rec.counts == (rec.outcome.error_kind is None)

    rt = Runtime(max_concurrency=4)
    assert await rt.run(specs, record) == 20
    assert results["ep-5"] == "actor"
    assert sum(1 for k in results.values() if k is None) == 19
    assert rt.errors == 1 and rt.finished == 20


async def test_wall_clock_timeout_has_clear_reason() -> None:
    out = await Episode(spec(0, ActorSpec("slow", Sleeper), timeout_s=0.05)).run()
    assert out.error_kind == "timeout"
    assert out.reason.startswith("timeout: episode exceeded 0.05s")


async def test_step_limit_is_a_task_failure_with_reason() -> None:
    out = await Episode(spec(0, ActorSpec("action", Undecided), max_steps=3)).run()
    assert out.error_kind == "step_limit"
    assert out.steps == 3
    assert "step limit: 3 steps" in out.reason
    assert out.counts_for_value and not out.success


async def test_stall_is_detected_instead_of_hanging() -> None:
    with anyio.fail_after(5):
        out = await Episode(spec(0, ActorSpec("idle", Idler), timeout_s=60)).run()
    assert out.error_kind == "actor"
    assert out.reason.startswith("stalled")


@pytest.mark.parametrize(
    ("actor", "needle"),
    [(Deaf, "subscribes to no message type"), (Shouter, "publishes Thought but no actor")],
)
async def test_wiring_mistakes_reported_at_start(actor: type[Actor], needle: str) -> None:
    out = await Episode(spec(0, counter(), ActorSpec("odd", actor))).run()
    assert out.error_kind == "config"
    assert out.error is not None and needle in out.error and "'odd'" in out.error
    assert out.steps == 0


async def test_cancelling_a_run_leaves_no_task_running() -> None:
    before = set(asyncio.all_tasks())
    rt = Runtime(max_concurrency=50)
    specs = [spec(i % 5, ActorSpec("slow", Sleeper)) for i in range(200)]
    with anyio.move_on_after(0.2) as scope:
        await rt.run(specs)
    assert scope.cancelled_caught
    await anyio.sleep(0)
    leftover = {t for t in asyncio.all_tasks() if not t.done()} - before
    leftover.discard(asyncio.current_task())  # type: ignore[arg-type]
    assert leftover == set()
    assert rt.in_flight == 0


async def test_five_thousand_concurrent_episodes_complete() -> None:
    hub = EventHub()
    ended = hub.subscribe([EPISODE_ENDED], maxsize=10_000, policy="block")
    rt = Runtime(max_concurrency=5000, hub=hub)
    tasks = demo_tasks(5000, seed=3)
    specs = (
        EpisodeSpec(f"e{i}", t, CountdownEnvironment, [counter(0.9)]) for i, t in enumerate(tasks)
    )
    outcomes = []

    async def collect(s: EpisodeSpec, o: object) -> None:
        outcomes.append(o.outcome)

    with anyio.fail_after(120):
        assert await rt.run(specs, collect) == 5000
    assert len(outcomes) == 5000
    assert all(getattr(o, "error") is None for o in outcomes)
    assert len(ended.mailbox) == 5000
    assert 0.5 < sum(getattr(o, "success") for o in outcomes) / 5000 < 1.0
