"""End to end: PRAF agents of simulated skill solve math tasks through the real episode."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from agentbus import registry
from agentbus.environment import EnvSetup, TaskSource
from agentbus.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from agentbus.outcome import Outcome
from agentbus.sim.engine import SimEngine
from agentbus.sim.model import SimModel
from agentbus.sim.serving import ServingConfig, ServingModel
from agentbus.sim.transport import SimTransport
from environments.math.env import MathEnvironment
from environments.math.expert import MathExpert
from modules.praf import AGENT, SLOTS

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "capabench" / "math"


class SimLLM:
    def __init__(self, transport: SimTransport, model: str) -> None:
        self.transport, self.model = transport, model

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        return await self.transport.complete(self.model, messages, params)


def transport_for(setup: EnvSetup) -> SimTransport:
    model = SimModel(experts=[MathExpert()])
    model.add_tasks("math", setup.tasks)
    return SimTransport(SimEngine(model, ServingModel(ServingConfig(speed=0.0))))


async def mean_reward(setup: EnvSetup, models: dict[str, str], transport: SimTransport) -> float:
    outcomes: list[Outcome] = []

    async def one(i: int) -> None:
        actors = [
            ActorSpec(
                slot=s, factory=registry.get("modules", AGENT[s]), llm=SimLLM(transport, models[s])
            )
            for s in SLOTS
        ]
        spec = EpisodeSpec(f"m-{i}", setup.tasks[i], setup.factory, actors)
        outcomes.append(await Episode(spec).run())

    async with anyio.create_task_group() as tg:
        for i in range(len(setup.tasks)):
            tg.start_soon(one, i)
    for o in outcomes:
        assert o.counts_for_value, o.reason
        assert o.llm_calls > 0 and 0.0 <= o.reward <= 1.0
    return sum(o.reward for o in outcomes) / len(outcomes)


async def test_strong_agents_solve_more_generated_tasks_than_weak_ones() -> None:
    setup = MathEnvironment.setup(TaskSource(count=50, seed=0))
    transport = transport_for(setup)
    strong = await mean_reward(setup, dict.fromkeys(SLOTS, "strong"), transport)
    weak = await mean_reward(setup, dict.fromkeys(SLOTS, "weak"), transport)
    assert strong >= 0.8
    assert strong > weak + 0.3
    # a single strong module lifts a weak agent
    planning = await mean_reward(
        setup, {**dict.fromkeys(SLOTS, "weak"), "planning": "strong"}, transport
    )
    assert planning > weak


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared CapaBench data missing")
async def test_capabench_algebra_runs_end_to_end() -> None:
    source = TaskSource(
        dataset=SHARED / "algebra.json", knowledge=SHARED / "algebra_knowledge.json", limit=40
    )
    setup = MathEnvironment.setup(source)
    transport = transport_for(setup)
    strong = await mean_reward(setup, dict.fromkeys(SLOTS, "strong"), transport)
    weak = await mean_reward(setup, dict.fromkeys(SLOTS, "weak"), transport)
    assert strong >= 0.7 and strong > weak
