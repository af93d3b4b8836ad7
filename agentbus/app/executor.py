"""Where a run's episodes execute: this event loop, or Ray workers.

:func:`open_runtime` gives the evaluation its runtime: the local
:class:`~agentbus.executors.runtime.Runtime`, or a
:class:`~agentbus.executors.ray_runtime.RayRuntime`
whose workers each run many episodes on their own event loop while the
records come back to this process (the store, the attribution service, the
live server and the scheduler stay here).

What a Ray worker sets up: the driver sends each worker one
:class:`RunWorkerSetup` (the run config as JSON, picklable); the worker loads
the environment's tasks itself (the same source and seed give the same
tasks), starts its own simulator when a ``sim:`` model is named, and opens
its own LLM router. The router's cache is
in memory only: every episode of a task runs on one worker, so the calls the
coalitions share still meet in that worker's cache; a disk cache is per
process and would be written by several at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio

from agentbus.app.config import RunConfig
from agentbus.app.preparation import load_environment, sim_config
from agentbus.core.environment import Environment, EnvSetup
from agentbus.executors.remote import WorkerContext
from agentbus.executors.runtime import Runtime
from agentbus.llm.router import LLMRouter
from agentbus.llm.stats import ModelStats, summary_line
from agentbus.llm.types import LLM
from agentbus.sim.service import sim_service


@dataclass
class RunWorkerContext:
    """A worker's environment factory and router (a :class:`WorkerContext`)."""

    setup: EnvSetup
    router: LLMRouter

    def env_factory(self) -> Environment:
        return self.setup.factory()

    def client(self, model: str) -> LLM:
        return self.router.client(model)

    def stats(self) -> dict[str, Any]:
        return self.router.stats()


@dataclass(frozen=True)
class RunWorkerSetup:
    """Picklable: opens a worker's context from the run config (JSON)."""

    config_json: str

    def __call__(self) -> AbstractAsyncContextManager[WorkerContext]:
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[WorkerContext]:
        config = RunConfig.model_validate_json(self.config_json)
        setup = await anyio.to_thread.run_sync(load_environment, config)
        async with AsyncExitStack() as stack:
            sim = None
            if any(m.startswith("sim:") for m in config.models()):
                sim = await stack.enter_async_context(sim_service(sim_config(config)))
                sim.model.add_tasks(config.env, setup.tasks)
            llm = config.llm.model_copy(update={"cache_dir": None})
            router = await stack.enter_async_context(LLMRouter(llm, sim=sim))
            yield RunWorkerContext(setup, router)


def worker_setup(config: RunConfig) -> RunWorkerSetup:
    return RunWorkerSetup(config.model_dump_json())


@asynccontextmanager
async def open_runtime(config: RunConfig, **options: Any) -> AsyncIterator[Runtime]:
    """The run's runtime; ``options`` go to :class:`Runtime` (concurrency, hub, ...).

    With Ray, ``--concurrency`` is per worker: each worker is one event loop,
    and that is what the limit protects.
    """
    if config.executor == "local":
        yield Runtime(**options)
        return
    from agentbus.executors.ray_runtime import RayRuntime

    options["max_concurrency"] = config.concurrency * config.workers
    async with RayRuntime(
        worker_setup(config), workers=config.workers, address=config.ray_address, **options
    ) as runtime:
        yield runtime


def executor_summary(runtime: Runtime) -> dict[str, Any] | None:
    """For results.json: the Ray pool's workers, losses and re-sent episodes."""
    summary = getattr(runtime, "summary", None)
    return summary() if callable(summary) else None


async def llm_report(router: LLMRouter, runtime: Runtime) -> tuple[str, dict[str, Any]]:
    """The run's LLM summary line and counters: this process's, or summed over Ray workers."""
    worker_stats = getattr(runtime, "worker_stats", None)
    if worker_stats is None:
        return router.summary(), router.stats()
    per_worker = [w["llm"] for w in await worker_stats()]
    models: dict[str, ModelStats] = {}
    for stats in per_worker:
        for key, entry in stats.get("models", {}).items():
            models.setdefault(key, ModelStats()).add(_model_stats(entry))
    total = ModelStats()
    for m in models.values():
        total.add(m)
    merged = {
        "models": {key: m.to_dict() for key, m in models.items()},
        "total": total.to_dict(),
        "cache": {"entries": sum(s.get("cache", {}).get("entries", 0) for s in per_worker)},
        "workers": len(per_worker),
    }
    return summary_line(total), merged


def _model_stats(entry: Mapping[str, Any]) -> ModelStats:
    names = ModelStats.__dataclass_fields__
    return ModelStats(**{k: v for k, v in entry.items() if k in names})
