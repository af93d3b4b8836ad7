"""Bus benchmark: delivery throughput and memory per idle episode.

Both figures are measured beside a plain-asyncio baseline in the same run:

* deliveries/s: one producer publishes N messages to one subscriber whose
  handler counts them, through a real Episode (stamping, typed dispatch,
  bounded mailboxes) vs an ``asyncio.Queue`` per subscriber with the same
  message objects and the same handler call;
* memory per idle episode: N concurrent episodes of a 4-actor agent whose
  planner waits on a pending "LLM call" (the others have nothing to do yet),
  peak RSS growth / N, vs N plain tasks each owning 4 queues, parked the same
  way.

Run: ``python benchmarks/bus.py [--messages N] [--episodes N]``. Targets the
design aims at: >= 200,000 deliveries/s, >= 0.5x the baseline, <= 20 KB per
idle episode.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import time

import anyio

from agentbus.core.actor import Actor, on
from agentbus.core.demo import CountdownEnvironment, demo_tasks
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.messages import Feedback, Observation, Plan, Reflection, StopEpisode, Thought


def rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# ---------------------------------------------------------------- throughput
class Producer(Actor):
    publishes = (Thought,)
    n = 0

    @on(Observation)
    async def go(self, msg: Observation) -> None:
        for i in range(self.n):
            await self.publish(Thought(text="x", round=i))


class Consumer(Actor):
    publishes = (StopEpisode,)
    n = 0

    def __init__(self) -> None:
        self.count = 0

    @on(Thought)
    async def count_it(self, msg: Thought) -> None:
        self.count += 1
        if self.count == self.n:
            await self.publish(StopEpisode(reason="done"))


async def agentbus_deliveries(n: int) -> float:
    Producer.n = Consumer.n = n
    task = demo_tasks(1)[0]
    spec = EpisodeSpec(
        "bench",
        task,
        CountdownEnvironment,
        [ActorSpec("producer", Producer), ActorSpec("consumer", Consumer)],
        timeout_s=None,
    )
    t0 = time.perf_counter()
    out = await Episode(spec).run()
    dt = time.perf_counter() - t0
    assert out.error is None, out.error
    return n / dt


async def asyncio_deliveries(n: int) -> float:
    queue: asyncio.Queue[Thought] = asyncio.Queue(maxsize=64)
    count = 0

    async def handler(msg: Thought) -> None:
        nonlocal count
        count += 1

    async def consumer() -> None:
        for _ in range(n):
            await handler(await queue.get())

    async def producer() -> None:
        for i in range(n):
            await queue.put(Thought(text="x", round=i))

    t0 = time.perf_counter()
    await asyncio.gather(consumer(), producer())
    dt = time.perf_counter() - t0
    assert count == n
    return n / dt


# -------------------------------------------------------------------- memory
class Parked(Actor):
    """The planning module, waiting on a model answer that has not come yet."""

    gate: anyio.Event

    @on(Observation)
    async def wait(self, msg: Observation) -> None:
        await self.gate.wait()


class Waiting(Actor):
    """A downstream module with nothing to do until the plan arrives."""

    @on(Plan, Thought, Feedback, Reflection)
    async def handle(self, msg: Plan) -> None:
        return None


async def agentbus_idle_kb(n: int) -> float:
    gate = anyio.Event()
    Parked.gate = gate
    tasks = demo_tasks(n)
    slots = ("planning", "reasoning", "action", "reflection")
    specs = [
        EpisodeSpec(
            f"e{i}",
            t,
            CountdownEnvironment,
            [ActorSpec(s, Parked if s == "planning" else Waiting) for s in slots],
            timeout_s=None,
        )
        for i, t in enumerate(tasks)
    ]
    gc.collect()
    before = rss_kb()
    peak = before
    async with anyio.create_task_group() as tg:
        for s in specs:
            tg.start_soon(Episode(s).run)
        for _ in range(20):
            await anyio.sleep(0.01)
        peak = max(peak, rss_kb())
        gate.set()
    return (peak - before) / n


async def asyncio_idle_kb(n: int) -> float:
    gate = asyncio.Event()

    async def episode() -> None:
        # four modules' queues, the first module waiting on its model call
        queues = [asyncio.Queue[Thought](maxsize=64) for _ in range(4)]
        await queues[0].put(Thought(text="start"))
        await queues[0].get()
        await gate.wait()

    gc.collect()
    before = rss_kb()
    tasks = [asyncio.ensure_future(episode()) for _ in range(n)]
    for _ in range(20):
        await asyncio.sleep(0.01)
    peak = rss_kb()
    gate.set()
    await asyncio.gather(*tasks)
    return (peak - before) / n


async def main(messages: int, episodes: int) -> None:
    print(f"deliveries: {messages} messages, one producer -> one handler, one core")
    base_rate = await asyncio_deliveries(messages)
    ours_rate = await agentbus_deliveries(messages)
    base_rate = max(base_rate, await asyncio_deliveries(messages))
    ours_rate = max(ours_rate, await agentbus_deliveries(messages))
    print(f"  plain asyncio.Queue : {base_rate:12,.0f} deliveries/s")
    print(f"  agentbus            : {ours_rate:12,.0f} deliveries/s  (target >= 200,000)")
    print(f"memory: {episodes} idle concurrent episodes (4 modules + environment each)")
    base_kb = await asyncio_idle_kb(episodes)
    ours_kb = await agentbus_idle_kb(episodes)
    print(f"  plain asyncio tasks : {base_kb:8.1f} KB per episode")
    print(f"  agentbus episodes   : {ours_kb:8.1f} KB per episode  (target <= 20 KB)")
    print(f"ratio deliveries/s agentbus/asyncio: {ours_rate / base_rate:.2f}x  (target >= 0.5x)")
    print(f"ratio memory per idle episode agentbus/asyncio: {ours_kb / max(base_kb, 0.01):.2f}x")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--episodes", type=int, default=5_000)
    args = ap.parse_args()
    anyio.run(main, args.messages, args.episodes)
