"""End to end: the PRAF modules, unchanged, play git puzzles against the in-process simulator."""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from agentbus import registry
from agentbus.environment import Task, TaskSource
from agentbus.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from agentbus.outcome import Outcome
from agentbus.sim.engine import SimEngine
from agentbus.sim.model import SimModel
from agentbus.sim.serving import ServingConfig, ServingModel
from agentbus.sim.transport import SimTransport
from environments.git.env import GitEnvironment
from environments.git.expert import GitExpert

SLOTS = ("planning", "reasoning", "action", "reflection")


class SimLLM:
    """One named simulated model behind the in-process transport."""

    def __init__(self, transport: SimTransport, model: str) -> None:
        self.transport = transport
        self.model = model

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        return await self.transport.complete(self.model, messages, params)


def transport_for(tasks: list[Task]) -> SimTransport:
    model = SimModel(experts=[GitExpert()])
    model.add_tasks("git", tasks)
    return SimTransport(SimEngine(model, ServingModel(ServingConfig(speed=0.0))))


async def run_all(
    tasks: list[Task], models: dict[str, str], transport: SimTransport
) -> list[Outcome]:
    outcomes: list[Outcome] = []

    async def one(i: int, task: Task) -> None:
        actors = [
            ActorSpec(
                slot=slot,
                factory=registry.get("modules", f"praf.{slot}"),
                llm=SimLLM(transport, models[slot]),
            )
            for slot in SLOTS
        ]
        spec = EpisodeSpec(
            episode_id=f"ep-{i}", task=task, env_factory=GitEnvironment, actors=actors, trace=True
        )
        outcomes.append(await Episode(spec).run())

    async with anyio.create_task_group() as tg:
        for i, task in enumerate(tasks):
            tg.start_soon(one, i, task)
    return outcomes


async def test_praf_agent_plays_git_puzzles_end_to_end() -> None:
    tasks = GitEnvironment.setup(TaskSource(count=30, seed=21)).tasks
    transport = transport_for(tasks)
    strong = await run_all(tasks, dict.fromkeys(SLOTS, "strong"), transport)
    weak = await run_all(tasks, dict.fromkeys(SLOTS, "weak"), transport)
    for o in strong + weak:
        assert o.counts_for_value, o.reason
        assert 0.0 <= o.reward <= 1.0 and o.llm_calls > 0
        assert o.details["puzzle"].startswith("gen-21-")
    mean_strong = sum(o.reward for o in strong) / len(strong)
    mean_weak = sum(o.reward for o in weak) / len(weak)
    assert mean_strong > 0.8 and mean_weak < mean_strong - 0.25
    # the strong agent mostly follows the recorded path: few wasted rounds
    solved = [o for o in strong if o.success]
    extra = [o.steps - o.details["solution_length"] for o in solved]
    assert sum(extra) / len(extra) < 1.5


async def test_strong_reasoning_helps_a_weak_agent() -> None:
    tasks = GitEnvironment.setup(TaskSource(count=30, seed=22)).tasks
    transport = transport_for(tasks)
    weak = await run_all(tasks, dict.fromkeys(SLOTS, "weak"), transport)
    models = dict.fromkeys(SLOTS, "weak") | {"reasoning": "strong"}
    helped = await run_all(tasks, models, transport)
    gain = sum(o.reward for o in helped) - sum(o.reward for o in weak)
    assert gain / len(tasks) > 0.2
