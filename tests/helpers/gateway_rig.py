"""A live module gateway with one open session, for the gateway's tests.

Simulator, router, gateway and one session of one task, entered and left as one
async context: the router's task group must be left in the task that entered
it, which a pytest fixture does not do. The tests differ only in the task, the
slots' models, the simulator's speed and which slots are off. Several offer
the model the same tool, :data:`CALCULATOR`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from agentbus.core.bus import Bus, describe
from agentbus.core.environment import Task
from agentbus.gateway.context import AgentContext
from agentbus.gateway.server import Gateway
from agentbus.gateway.session import Session
from agentbus.llm.config import LLMConfig
from agentbus.llm.router import LLMRouter
from agentbus.sim.config import SimConfig
from agentbus.sim.service import sim_service

#: a tool in the OpenAI function format, as the gateway's callers offer it
CALCULATOR = {
    "type": "function",
    "function": {
        "name": "calculator",
        "parameters": {
            "type": "object",
            "properties": {"expression": {"type": "string"}},
            "required": ["expression"],
        },
    },
}


@dataclass
class Rig:
    sim_url: str | None  # the simulator's OpenAI-style base URL (None: served in process)
    gateway: Gateway
    session: Session
    ctx: AgentContext
    router: LLMRouter
    trace: list[dict[str, Any]]


@asynccontextmanager
async def open_rig(
    task: Task,
    slots: Mapping[str, str],
    *,
    episode_id: str,
    speed: float = 0.0,
    off: Iterable[str] = (),
    all_slots: tuple[str, ...] | None = None,
) -> AsyncIterator[Rig]:
    """``slots``: module -> model spec, where ``{sim}`` stands for the simulator's base URL
    (a model behind another backend, e.g. ``anthropic:{sim}#weak``). ``all_slots`` defaults
    to the slots given; every trace message is appended to ``Rig.trace``."""
    async with sim_service(SimConfig(speed=speed, experts=[])) as sim:
        sim.model.add_tasks(task.env, [task])
        async with LLMRouter(LLMConfig(), sim=sim) as router:
            gateway = Gateway()
            await gateway.start()
            trace: list[dict[str, Any]] = []
            specs = {m: spec.format(sim=sim.base_url) for m, spec in slots.items()}
            session = Session(
                episode_id=episode_id,
                task_id=task.id,
                slots={m: (spec, router.client(spec)) for m, spec in specs.items()},
                off=frozenset(off),
                bus=Bus(episode_id, trace=lambda m: trace.append(describe(m))),
                all_slots=all_slots if all_slots is not None else tuple(slots),
            )
            ctx = gateway.open(session)
            try:
                yield Rig(sim.base_url, gateway, session, ctx, router, trace)
            finally:
                await ctx.aclose()
                await gateway.stop()
