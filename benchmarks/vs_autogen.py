"""agentbus vs autogen-core: the same toy four-stage pipeline, same run, same machine.

The pipeline of one episode (no LLM, toy handlers): the environment's
observation goes to the planner, the plan to the reasoner, each thought to
the actor, each action to the environment, each feedback to the reflector and
each reflection back to the reasoner, for 5 rounds (20 handled messages per
episode). Both frameworks run it the way they are meant to be used:

* agentbus: one :class:`~agentbus.core.episode.Episode` per episode (its own bus,
  actors and mailboxes), all run by one :class:`~agentbus.executors.runtime.Runtime`;
* autogen-core: one ``SingleThreadedAgentRuntime``, five agent types with a
  ``TypeSubscription`` per message kind, one agent instance per type and
  episode (the topic source is the episode id), ``publish_message`` between
  stages.

Figures per framework, each in its own fresh subprocess, at 100, 1,000 and
5,000 concurrent episodes: handled messages/s (the best of ``--repeats``
rounds, same for both), and memory once every episode
has ended (RSS, live gc-tracked objects, and live agent instances found
through weak references) against the level before the first episode.

Run: ``python benchmarks/vs_autogen.py [--sizes 100,1000,5000]``. Needs
``pip install autogen-core`` (benchmark only, not a dependency of agentbus);
without it the script says so and exits 0. Target: >= 10x autogen-core's
messages/s, and memory back near its starting level when episodes end.
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import weakref
from dataclasses import dataclass
from typing import Any

ROUNDS = 5
#: handled messages per episode: the observation, 5 into the reasoner (the plan, then 4
#: reflections), 5 thoughts, 5 actions, 4 feedbacks to the reflector (the 5th ends the episode)
MESSAGES_PER_EPISODE = 1 + 3 * ROUNDS + (ROUNDS - 1)
RESULT_TAG = "VS-AUTOGEN-RESULT "
#: rounds per size; the fastest counts (the machine is shared: the others were disturbed)
REPEATS = [3]
LIVE: weakref.WeakSet[Any] = weakref.WeakSet()


def rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def best_of(one: Any, n: int) -> tuple[float, int]:
    """The fastest of ``REPEATS`` rounds of ``n`` concurrent episodes: (seconds, messages)."""
    runs = [await one(n, f"n{n}r{k}") for k in range(REPEATS[0])]
    best: tuple[float, int] = min(runs)
    return best


def settled() -> tuple[int, int]:
    """RSS and gc-tracked objects after a full collection."""
    gc.collect()
    return rss_kb(), len(gc.get_objects())


# ------------------------------------------------------------------ agentbus
def agentbus_rounds(sizes: list[int], uvloop: bool = False) -> list[dict[str, Any]]:
    import anyio

    from agentbus.core.actor import Actor, on
    from agentbus.core.environment import Environment, Score, Task
    from agentbus.core.episode import ActorSpec, EpisodeSpec
    from agentbus.core.messages import (
        ActionProposed,
        Feedback,
        Observation,
        Plan,
        Reflection,
        Thought,
    )
    from agentbus.executors.runtime import Runtime

    counter = [0]

    class ToyEnv(Environment):
        name = "toy"
        default_max_steps = ROUNDS + 1

        def __init__(self) -> None:
            self.steps = 0
            LIVE.add(self)

        async def reset(self, task: Task) -> Observation:
            return Observation(text="start")

        async def step(self, action: ActionProposed) -> Feedback:
            counter[0] += 1
            self.steps += 1
            return Feedback(text="ok", done=self.steps >= ROUNDS)

        async def score(self) -> Score:
            return Score(reward=1.0, success=True)

    class Planner(Actor):
        publishes = (Plan,)

        def __init__(self) -> None:
            LIVE.add(self)

        @on(Observation)
        async def plan(self, msg: Observation) -> Plan:
            counter[0] += 1
            return Plan(text="plan")

    class Reasoner(Actor):
        publishes = (Thought,)

        def __init__(self) -> None:
            self.round = 0
            LIVE.add(self)

        @on(Plan, Reflection)
        async def think(self, msg: Plan | Reflection) -> Thought:
            counter[0] += 1
            self.round += 1
            return Thought(text="think", round=self.round)

    class Doer(Actor):
        publishes = (ActionProposed,)

        def __init__(self) -> None:
            LIVE.add(self)

        @on(Thought)
        async def act(self, msg: Thought) -> ActionProposed:
            counter[0] += 1
            return ActionProposed(text="act", round=msg.round)

    class Reflector(Actor):
        publishes = (Reflection,)

        def __init__(self) -> None:
            LIVE.add(self)

        @on(Feedback)
        async def reflect(self, msg: Feedback) -> Reflection | None:
            if msg.done:  # the episode is over (the environment said so)
                return None
            counter[0] += 1
            return Reflection(text="again", round=msg.round)

    def specs(n: int, tag: str) -> list[EpisodeSpec]:
        actors = [
            ActorSpec("planning", Planner),
            ActorSpec("reasoning", Reasoner),
            ActorSpec("action", Doer),
            ActorSpec("reflection", Reflector),
        ]
        return [
            EpisodeSpec(
                f"{tag}-{i}",
                Task(id=f"t{i}", env="toy", instruction="go"),
                ToyEnv,
                actors,
                timeout_s=None,
            )
            for i in range(n)
        ]

    async def one(n: int, tag: str) -> tuple[float, int]:
        todo = specs(n, tag)
        runtime = Runtime(max_concurrency=n)
        counter[0] = 0
        t0 = time.perf_counter()
        await runtime.run(todo)
        dt = time.perf_counter() - t0
        assert runtime.errors == 0, "agentbus episodes failed"
        assert counter[0] == n * MESSAGES_PER_EPISODE, (counter[0], n)
        return dt, counter[0]

    async def main() -> list[dict[str, Any]]:
        await one(50, "warm")
        rss0, obj0 = settled()
        out = []
        for n in sizes:
            dt, msgs = await best_of(one, n)
            rss, obj = settled()
            out.append(_row(n, msgs, dt, rss0, rss, obj0, obj, len(LIVE)))
        return out

    options = {"use_uvloop": uvloop}
    result: list[dict[str, Any]] = anyio.run(main, backend_options=options)
    return result


# -------------------------------------------------------------- autogen-core
# autogen routes on the handler's type hints, resolved at import: module-level types
@dataclass
class Obs:
    text: str


@dataclass
class APlan:
    text: str


@dataclass
class AThought:
    text: str
    round: int


@dataclass
class AAction:
    text: str
    round: int


@dataclass
class AFeedback:
    text: str
    done: bool


@dataclass
class AReflection:
    text: str


def autogen_rounds(sizes: list[int]) -> list[dict[str, Any]]:
    import asyncio

    from autogen_core import (
        MessageContext,
        RoutedAgent,
        SingleThreadedAgentRuntime,
        TopicId,
        TypeSubscription,
        message_handler,
    )

    counter = [0]
    finished: dict[str, asyncio.Future[None]] = {}

    class Base(RoutedAgent):
        def __init__(self) -> None:
            super().__init__("toy stage")
            LIVE.add(self)

        async def send(self, msg: Any, kind: str) -> None:
            await self.publish_message(msg, TopicId(kind, self.id.key))

    class Planner(Base):
        @message_handler
        async def on_obs(self, message: Obs, ctx: MessageContext) -> None:
            counter[0] += 1
            await self.send(APlan("plan"), "plan")

    class Reasoner(Base):
        def __init__(self) -> None:
            super().__init__()
            self.round = 0

        @message_handler
        async def on_plan(self, message: APlan, ctx: MessageContext) -> None:
            await self.think()

        @message_handler
        async def on_reflection(self, message: AReflection, ctx: MessageContext) -> None:
            await self.think()

        async def think(self) -> None:
            counter[0] += 1
            self.round += 1
            await self.send(AThought("think", self.round), "thought")

    class Doer(Base):
        @message_handler
        async def on_thought(self, message: AThought, ctx: MessageContext) -> None:
            counter[0] += 1
            await self.send(AAction("act", message.round), "action")

    class Env(Base):
        def __init__(self) -> None:
            super().__init__()
            self.steps = 0

        @message_handler
        async def on_action(self, message: AAction, ctx: MessageContext) -> None:
            counter[0] += 1
            self.steps += 1
            if self.steps >= ROUNDS:  # done: the episode ends here, as in agentbus
                fut = finished.pop(self.id.key, None)
                if fut is not None and not fut.done():
                    fut.set_result(None)
                return
            await self.send(AFeedback("ok", False), "feedback")

    class Reflector(Base):
        @message_handler
        async def on_feedback(self, message: AFeedback, ctx: MessageContext) -> None:
            counter[0] += 1
            await self.send(AReflection("again"), "reflection")

    routes = {
        "planner": (Planner, ["observation"]),
        "reasoner": (Reasoner, ["plan", "reflection"]),
        "doer": (Doer, ["thought"]),
        "env": (Env, ["action"]),
        "reflector": (Reflector, ["feedback"]),
    }

    async def main() -> list[dict[str, Any]]:
        runtime = SingleThreadedAgentRuntime()
        for agent_type, (cls, topics) in routes.items():
            await cls.register(runtime, agent_type, cls)
            for topic in topics:
                await runtime.add_subscription(TypeSubscription(topic, agent_type))
        runtime.start()
        loop = asyncio.get_running_loop()

        async def one(n: int, tag: str) -> tuple[float, int]:
            counter[0] = 0
            futures = []
            t0 = time.perf_counter()
            for i in range(n):
                key = f"{tag}-{i}"
                fut: asyncio.Future[None] = loop.create_future()
                finished[key] = fut
                futures.append(fut)
                await runtime.publish_message(Obs("start"), TopicId("observation", key))
            await asyncio.gather(*futures)
            dt = time.perf_counter() - t0
            assert counter[0] == n * MESSAGES_PER_EPISODE, (counter[0], n)
            return dt, counter[0]

        await one(50, "warm")
        rss0, obj0 = settled()
        out = []
        for n in sizes:
            dt, msgs = await best_of(one, n)
            rss, obj = settled()
            out.append(_row(n, msgs, dt, rss0, rss, obj0, obj, len(LIVE)))
        await runtime.stop_when_idle()
        return out

    return asyncio.run(main())


def _row(
    n: int, msgs: int, dt: float, rss0: int, rss: int, obj0: int, obj: int, live: int
) -> dict[str, Any]:
    return {
        "episodes": n,
        "messages": msgs,
        "seconds": dt,
        "msgs_per_s": msgs / dt,
        "rss_growth_kb": rss - rss0,
        "objects_growth": obj - obj0,
        "live_agents": live,
    }


# ------------------------------------------------------------------- driver
def uvloop_installed() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def autogen_installed() -> bool:
    try:
        import autogen_core  # noqa: F401
    except ImportError:
        return False
    return True


def child(framework: str, sizes: list[int], repeats: int) -> int:
    REPEATS[0] = repeats
    if framework == "autogen":
        rows = autogen_rounds(sizes)
    else:
        rows = agentbus_rounds(sizes, uvloop=framework == "agentbus-uvloop")
    print(RESULT_TAG + json.dumps(rows))
    return 0


def run_child(framework: str, sizes: list[int], repeats: int) -> list[dict[str, Any]] | None:
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        framework,
        "--sizes",
        ",".join(map(str, sizes)),
        "--repeats",
        str(repeats),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            rows: list[dict[str, Any]] = json.loads(line[len(RESULT_TAG) :])
            return rows
    print(f"{framework}: run failed (exit {proc.returncode})\n{proc.stderr[-3000:]}")
    return None


def show(name: str, rows: list[dict[str, Any]]) -> None:
    for r in rows:
        print(
            f"  {name:15s} {r['episodes']:6,d} episodes: {r['msgs_per_s']:10,.0f} msgs/s "
            f"({r['seconds']:.2f} s); after they ended: RSS {r['rss_growth_kb'] / 1024:+7.1f} MB, "
            f"{r['objects_growth']:+9,d} objects, {r['live_agents']:6,d} live agents"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000,5000", help="concurrent episodes per round")
    ap.add_argument("--repeats", type=int, default=3, help="rounds per size; the fastest counts")
    ap.add_argument(
        "--child", choices=["agentbus", "agentbus-uvloop", "autogen"], help=argparse.SUPPRESS
    )
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.child:
        return child(args.child, sizes, args.repeats)
    if not autogen_installed():
        print(
            "autogen-core is not installed; this comparison needs it "
            "(benchmark only): pip install autogen-core"
        )
        return 0
    print(
        f"pipeline plan -> reason -> act -> reflect, {ROUNDS} rounds, toy handlers, "
        f"{MESSAGES_PER_EPISODE} handled messages per episode; each framework in its own "
        "process, memory measured against the level before the first round"
    )
    ours = run_child("agentbus", sizes, args.repeats)
    theirs = run_child("autogen", sizes, args.repeats)
    if ours is None or theirs is None:
        return 1
    uv = run_child("agentbus-uvloop", sizes, args.repeats) if uvloop_installed() else None
    show("agentbus", ours)
    if uv is not None:
        show("agentbus+uvloop", uv)
    show("autogen-core", theirs)
    for a, b in zip(ours, theirs, strict=True):
        print(
            f"ratio msgs/s agentbus/autogen-core at {a['episodes']:,} episodes: "
            f"{a['msgs_per_s'] / b['msgs_per_s']:.1f}x  (target >= 10x)"
        )
    if uv is None:
        print("uvloop not installed (pip install uvloop): no uvloop ratio")
        return 0
    for a, u, b in zip(ours, uv, theirs, strict=True):
        print(
            f"ratio msgs/s agentbus+uvloop/autogen-core at {a['episodes']:,} episodes: "
            f"{u['msgs_per_s'] / b['msgs_per_s']:.1f}x; uvloop/asyncio for agentbus: "
            f"{u['msgs_per_s'] / a['msgs_per_s']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
