"""Shared by the end-to-end episode tests: PRAF agents of simulated skill, in process.

Each environment's test builds a simulator with that environment's expert and
runs the unchanged PRAF modules on its tasks through the real core episode.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio

from agentbus.core import registry
from agentbus.core.environment import Environment, Task, TaskSource
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.outcome import Outcome
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from agentbus.sim.engine import SimEngine
from agentbus.sim.expert import Expert
from agentbus.sim.model import SimModel
from agentbus.sim.serving import ServingConfig, ServingModel
from agentbus.sim.transport import SimTransport
from modules.praf import AGENT, SLOTS


class SimLLM:
    """One named simulated model behind the in-process transport."""

    def __init__(self, transport: SimTransport, model: str) -> None:
        self.transport = transport
        self.model = model

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        return await self.transport.complete(self.model, messages, params)


def sim_transport(env: str, expert: Expert, tasks: Sequence[Task]) -> SimTransport:
    """An in-process simulator without delays that knows ``tasks`` through ``expert``."""
    model = SimModel(experts=[expert])
    model.add_tasks(env, tasks)
    return SimTransport(SimEngine(model, ServingModel(ServingConfig(speed=0.0))))


async def run_praf(
    tasks: Sequence[Task],
    env_factory: Callable[[], Environment],
    models: Mapping[str, str],
    transport: SimTransport,
    *,
    trace: bool = False,
) -> list[Outcome]:
    """Run one PRAF episode per task concurrently; outcomes in task order."""
    outcomes: list[Outcome | None] = [None] * len(tasks)

    async def one(i: int, task: Task) -> None:
        actors = [
            ActorSpec(
                slot=slot,
                factory=registry.get("modules", AGENT[slot]),
                llm=SimLLM(transport, models[slot]),
            )
            for slot in SLOTS
        ]
        spec = EpisodeSpec(f"ep-{i}", task, env_factory, actors, trace=trace)
        outcomes[i] = await Episode(spec).run()

    async with anyio.create_task_group() as tg:
        for i, task in enumerate(tasks):
            tg.start_soon(one, i, task)
    return [o for o in outcomes if o is not None]


@dataclass(frozen=True)
class PrafWorld:
    """Generated tasks of one environment and an in-process simulator that knows them."""

    tasks: list[Task]
    env_factory: Callable[[], Environment]
    transport: SimTransport

    async def run(self, models: Mapping[str, str]) -> list[Outcome]:
        """One traced PRAF episode per task with ``models`` per slot."""
        return await run_praf(self.tasks, self.env_factory, models, self.transport, trace=True)


def praf_world(
    env: str, env_type: type[Environment], expert: Expert, *, count: int, seed: int
) -> PrafWorld:
    """``count`` tasks of ``env`` generated from ``seed``, known to the simulator via ``expert``."""
    tasks = env_type.setup(TaskSource(count=count, seed=seed)).tasks
    return PrafWorld(tasks, env_type, sim_transport(env, expert, tasks))


async def strong_and_weak(world: PrafWorld) -> tuple[list[Outcome], list[Outcome]]:
    """All-strong and all-weak traced runs on one transport, each outcome checked.

    Every environment's end-to-end test compares these two runs; the checks here
    are the ones any environment must pass (a valued outcome, a reward in [0, 1],
    at least one model call), so each test adds only its own.
    """
    strong = await world.run(dict.fromkeys(SLOTS, "strong"))
    weak = await world.run(dict.fromkeys(SLOTS, "weak"))
    for o in strong + weak:
        assert o.counts_for_value, o.reason
        assert 0.0 <= o.reward <= 1.0 and o.llm_calls > 0
    return strong, weak
