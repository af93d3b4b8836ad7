"""The reference computation of the simulator's true coalition values.

At temperature 0 the simulator's answer is a function of the model name and
the prompt, so an episode's reward is a function of (coalition, task): the
only randomness left in v(S) is which tasks the generator draws. The true
value of a coalition is therefore the expected reward over the generator's
task distribution, and this module estimates it by plain Monte Carlo over
many fresh task seeds, with every coalition run on the same tasks.

The unit of sampling is one *block*: the ``per_seed`` tasks the built-in
generator makes for one seed (``TaskSource(count=per_seed, seed=s)``), which
is exactly the task set of a run started with ``--tasks per_seed --seed s``.
So the estimand is the expected v(S) of such a run over a uniformly random
seed, and block means are independent and identically distributed, which
makes their standard error the honest one.

Everything runs in process: the simulator without delays and without a
server, the LLM router with its completion cache (coalitions share every
call up to the first slot where they differ, which at temperature 0 changes
nothing but the cost), no traces, no run store, no events. Several processes
split the seeds between them.

This module finds environments and modules by name through the registry and
never imports ``attribution``: turning v(S) into Shapley values is the
application layer's job (``python -m agentbus.truth``).
"""

from __future__ import annotations

import math
import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agentbus.core import registry
from agentbus.core.coalitions import all_coalitions, coalition_key
from agentbus.core.environment import EnvSetup, TaskSource
from agentbus.core.episode import ActorSpec, EpisodeSpec
from agentbus.core.logs import configure
from agentbus.core.outcome import Outcome
from agentbus.executors.runtime import Runtime
from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.router import LLMRouter
from agentbus.sim.config import SimConfig
from agentbus.sim.service import sim_service

#: episodes in flight per process: enough to keep the loop busy, small enough for memory
CONCURRENCY = 256


@dataclass(frozen=True)
class Setting:
    """What one reference computation is about: environment, models, agent, limits."""

    env: str
    default: str
    test: str
    agent: str = "praf"
    per_seed: int = 30
    max_steps: int | None = None
    dataset: Path | None = None
    knowledge: Path | None = None
    #: with a dataset, block ``b`` is every ``shards``-th task starting at ``b``
    shards: int = 1
    #: run only these coalition keys (None: all); a drift check needs a few, not 16
    coalitions: tuple[str, ...] | None = None

    def source(self, seed: int) -> TaskSource:
        return TaskSource(
            dataset=self.dataset, knowledge=self.knowledge, count=self.per_seed, seed=seed
        )


@dataclass
class Sums:
    """Per-coalition reward sums per block, plus the failures that are not the agent's."""

    coalitions: list[str]
    #: block (seed) -> coalition key -> [reward sum, episodes]
    blocks: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    infra_errors: int = 0
    episodes: int = 0
    seconds: float = 0.0
    #: (seed, task id) -> coalition key -> reward, kept only when asked for (a study
    #: of stopping rules resamples whole tasks; the table needs the sums alone)
    tasks: dict[tuple[int, str], dict[str, float]] | None = None
    #: (seed, task id) -> coalition key -> slot -> (input tokens, output tokens) of
    #: every call the slot's module made (the agent's own use, cache-shared calls
    #: included); kept with ``tasks`` (the cost truth, :mod:`agentbus.sim.truth.cost`)
    usage: dict[tuple[int, str], dict[str, dict[str, tuple[int, int]]]] | None = None

    def merge(self, other: Sums) -> None:
        self.blocks.update(other.blocks)
        if other.tasks is not None:
            self.tasks = {**(self.tasks or {}), **other.tasks}
        if other.usage is not None:
            self.usage = {**(self.usage or {}), **other.usage}
        self.infra_errors += other.infra_errors
        self.episodes += other.episodes
        self.seconds += other.seconds


@dataclass(frozen=True)
class CoalitionStat:
    """One coalition's estimate: mean of the block means and its standard error."""

    mean: float
    se: float
    tasks: int


def summarise(sums: Sums) -> dict[str, CoalitionStat]:
    """Mean and standard error (sd of block means / sqrt(blocks)) per coalition."""
    out: dict[str, CoalitionStat] = {}
    blocks = sorted(sums.blocks)
    for key in sums.coalitions:
        means = [sums.blocks[b][key][0] / sums.blocks[b][key][1] for b in blocks]
        tasks = int(sum(sums.blocks[b][key][1] for b in blocks))
        m = len(means)
        mean = sum(means) / m if m else math.nan
        if m > 1:
            var = sum((x - mean) ** 2 for x in means) / (m - 1)
            se = math.sqrt(var / m)
        else:
            se = math.inf
        out[key] = CoalitionStat(mean=mean, se=se, tasks=tasks)
    return out


def covariance(sums: Sums) -> list[list[float]]:
    """Covariance matrix of the coalition means (block-level, over ``sums.coalitions``).

    The same tasks run in every coalition, so the means are correlated; a
    linear function of v(S) such as a Shapley value needs the whole matrix
    for its standard error.
    """
    blocks = sorted(sums.blocks)
    m = len(blocks)
    keys = sums.coalitions
    if m < 2:
        return [[math.inf] * len(keys) for _ in keys]
    rows = [[sums.blocks[b][k][0] / sums.blocks[b][k][1] for k in keys] for b in blocks]
    means = [sum(r[j] for r in rows) / m for j in range(len(keys))]
    out = [[0.0] * len(keys) for _ in keys]
    for i in range(len(keys)):
        for j in range(i, len(keys)):
            c = sum((r[i] - means[i]) * (r[j] - means[j]) for r in rows) / (m - 1) / m
            out[i][j] = out[j][i] = c
    return out


def agent_modules(agent: str) -> dict[str, str]:
    """slot -> module name of a registered agent (the plan's order of slots)."""
    modules = registry.get("agents", agent)
    return dict(modules)


def coalition_keys(agent: str) -> tuple[tuple[str, ...], list[str]]:
    """The agent's slots and the keys of all its coalitions (smallest first)."""
    slots = tuple(agent_modules(agent))
    return slots, [coalition_key(slots, c) for c in all_coalitions(slots)]


def _specs(setting: Setting, setup: EnvSetup, router: LLMRouter) -> list[EpisodeSpec]:
    """Every (task, coalition) episode of one block, task-major, built from names.

    Task-major order keeps one task's coalitions in flight together, so
    their shared calls coalesce in the cache.
    """
    modules = agent_modules(setting.agent)
    slots = tuple(modules)
    classes = {slot: registry.get("modules", name) for slot, name in modules.items()}
    specs: list[EpisodeSpec] = []
    for task in setup.tasks:
        for coalition in all_coalitions(slots):
            key = coalition_key(slots, coalition)
            if setting.coalitions is not None and key not in setting.coalitions:
                continue
            members = set(coalition)
            actors = [
                ActorSpec(
                    slot,
                    classes[slot],
                    router.client(setting.test if slot in members else setting.default),
                )
                for slot in slots
            ]
            specs.append(
                EpisodeSpec(
                    episode_id=f"truth|{key or '-'}|{task.id}",
                    task=task,
                    env_factory=setup.factory,
                    actors=actors,
                    max_steps=setting.max_steps,
                    timeout_s=None,
                    metadata={"coalition_key": key},
                    trace=False,
                )
            )
    return specs


async def _run_block(
    setting: Setting,
    setup: EnvSetup,
    seed: int,
    router: LLMRouter,
    sums: Sums,
) -> None:
    block = sums.blocks.setdefault(seed, {k: [0.0, 0.0] for k in sums.coalitions})
    failed: list[EpisodeSpec] = []

    async def on_outcome(spec: EpisodeSpec, result: Any) -> None:
        # the runtime hands over the episode's record (or, before records, its outcome)
        outcome: Outcome = getattr(result, "outcome", result)
        sums.episodes += 1
        if not outcome.counts_for_value:
            sums.infra_errors += 1
            failed.append(spec)
            return
        key = spec.metadata["coalition_key"]
        block[key][0] += outcome.reward
        block[key][1] += 1
        if sums.tasks is not None:
            sums.tasks.setdefault((seed, spec.task.id), {})[key] = float(outcome.reward)
        if sums.usage is not None:
            sums.usage.setdefault((seed, spec.task.id), {})[key] = {
                slot: (u.input_tokens, u.output_tokens) for slot, u in outcome.usage.items()
            }

    runtime = Runtime(max_concurrency=CONCURRENCY)
    await runtime.run(_specs(setting, setup, router), on_outcome)
    if failed:  # an in-process simulator has no infrastructure to fail; say so if it does
        raise RuntimeError(
            f"{len(failed)} episode(s) failed outside the agent, e.g. {failed[0].episode_id}"
        )


async def _run_seeds(setting: Setting, seeds: Sequence[int], per_task: bool) -> Sums:
    env_cls = registry.get("environments", setting.env)
    experts = [setting.env] if setting.env in registry.names("experts") else []
    _, keys = coalition_keys(setting.agent)
    if setting.coalitions is not None:
        keys = [k for k in keys if k in setting.coalitions]
    sums = Sums(keys, tasks={} if per_task else None, usage={} if per_task else None)
    t0 = time.perf_counter()
    # no delays, hence no use for the prefix-cache model: it only times prefills
    # and counts cached tokens (hashing every prompt's blocks was ~12% of robot's time)
    sim_config = SimConfig(transport="inprocess", speed=0.0, experts=experts, prefix_cache_tokens=0)
    llm_config = LLMConfig(
        limits=EndpointLimits(max_concurrency=4096, max_retries=0),
        cache="on",
        sim_transport="inprocess",
    )
    async with sim_service(sim_config) as sim:
        for seed in seeds:
            setup: EnvSetup = env_cls.setup(setting.source(seed))
            if setting.dataset is not None:
                setup.tasks = setup.tasks[seed :: setting.shards]
            sim.model.add_tasks(setting.env, setup.tasks)
            # a fresh router per block: calls never repeat across tasks, so the
            # cache only needs to live as long as one block's coalitions
            async with LLMRouter(llm_config, sim=sim) as router:
                await _run_block(setting, setup, seed, router, sums)
    sums.seconds = time.perf_counter() - t0
    return sums


def run_seeds(setting: Setting, seeds: Sequence[int], per_task: bool = False) -> Sums:
    """Run every coalition on the blocks of ``seeds`` in this process (blocking).

    ``per_task`` also keeps every task's reward per coalition (``Sums.tasks``).
    """
    configure("warning")  # also in spawned workers, which start with default logging
    result: Sums = anyio.run(_run_seeds, setting, list(seeds), per_task, backend="asyncio")
    return result


def compute(
    setting: Setting,
    seeds: Sequence[int],
    *,
    workers: int = 1,
    chunk: int = 4,
    progress: Callable[[Sums], None] | None = None,
    deadline: float | None = None,
    per_task: bool = False,
) -> Sums:
    """Run ``seeds`` across ``workers`` processes in chunks; ``progress`` sees the running sums.

    ``deadline`` (a ``time.monotonic()`` value) stops starting new chunks once
    passed: the sums then cover the seeds finished so far, in seed order, and
    their standard errors say honestly how precise that is. ``per_task`` also
    keeps every task's reward per coalition (``Sums.tasks``).
    """
    _, keys = coalition_keys(setting.agent)
    total = Sums(keys)
    chunks = [list(seeds[i : i + chunk]) for i in range(0, len(seeds), chunk)]

    def late() -> bool:
        return deadline is not None and time.monotonic() > deadline

    if workers <= 1:
        for part in chunks:
            if late():
                break
            total.merge(run_seeds(setting, part, per_task))
            if progress is not None:
                progress(total)
        return total
    ctx = multiprocessing.get_context("spawn")  # no inherited event loop or sympy workers
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending = list(chunks)
        running = {
            pool.submit(run_seeds, setting, pending.pop(0), per_task)
            for _ in range(workers)
            if pending
        }
        while running:
            future = next(as_completed(running))
            running.discard(future)
            total.merge(future.result())
            if progress is not None:
                progress(total)
            if pending and not late():
                running.add(pool.submit(run_seeds, setting, pending.pop(0), per_task))
    return total


__all__ = [
    "CoalitionStat",
    "Setting",
    "Sums",
    "coalition_keys",
    "compute",
    "covariance",
    "run_seeds",
    "summarise",
]
