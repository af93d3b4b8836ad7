"""The application layer: compose one evaluation from a :class:`RunConfig`.

This is the thin layer DESIGN.md allows to import ``attribution`` directly; it
finds modules and environments by name. It wires together the environment's
tasks, the simulator (when a ``sim:`` model is used), the LLM router, the run
store (resume), the attribution service, the console progress, the live
server, and the runtime, then writes the results files and prints the table.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import structlog
from rich.console import Console

from agentbus import registry
from agentbus.config import RESULT_KEYS, RunConfig
from agentbus.environment import EnvSetup, Environment, TaskSource
from agentbus.episode import EpisodeSpec
from agentbus.errors import InfraError, UserError
from agentbus.evaluation import Agent, Plan, SpecFactory, episode_id
from agentbus.events import RUN_FINISHED, RUN_STARTED, EventHub
from agentbus.coalitions import coalition_key
from agentbus.llm.router import LLMRouter
from agentbus.outcome import Outcome
from agentbus.progress import Progress
from agentbus.runtime import Runtime
from agentbus.server import LiveServer
from agentbus.sim.service import SimHandle, sim_service
from agentbus.store import RunStore, counts
from attribution.results import build_results, render_console, render_markdown
from attribution.service import AttributionService

log = structlog.get_logger("agentbus.run")

#: stop early when this many episodes in a row failed on the infrastructure
INFRA_BREAKER = 25


@dataclass
class RunReport:
    """What a finished run hands back to the command line."""

    run_dir: Path
    results: dict[str, Any]
    episodes_run: int
    episodes_skipped: int
    infra_errors: int
    llm_summary: str
    stopped_early: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)


def load_environment(config: RunConfig) -> tuple[type[Environment], EnvSetup]:
    env_cls = registry.get("environments", config.env)
    source = TaskSource(
        dataset=config.dataset,
        knowledge=config.knowledge,
        count=config.tasks,
        seed=config.seed,
        limit=config.limit,
    )
    setup = env_cls.setup(source)
    if not setup.tasks:
        raise UserError(f"environment {config.env!r} produced no tasks from {source}")
    return env_cls, setup


def default_run_dir(config: RunConfig) -> Path:
    return Path("runs") / f"{config.env}-{time.strftime('%Y%m%d-%H%M%S')}"


def parse_serve(value: str) -> tuple[str, int]:
    """``8080`` / ``0.0.0.0:8080`` / ``[::1]:8080`` -> (host, port)."""
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise UserError(f"--serve expects [HOST:]PORT, got {value!r}") from None
    if not 0 <= number <= 65535:
        raise UserError(f"--serve port out of range: {number}")
    return host, number


class Breaker:
    """Stops a run whose infrastructure keeps failing instead of burning through it."""

    def __init__(self, threshold: int = INFRA_BREAKER) -> None:
        self.threshold = threshold
        self.streak = 0
        self.total = 0
        self.first: str | None = None
        self.tripped = anyio.Event()

    def record(self, outcome: Outcome) -> None:
        if outcome.error_kind in ("infra", "timeout"):
            self.total += 1
            self.streak += 1
            self.first = self.first or outcome.error
            if self.streak >= self.threshold:
                self.tripped.set()
        else:
            self.streak = 0


async def evaluate(config: RunConfig, console: Console | None = None) -> RunReport:
    """Run the whole evaluation described by ``config``."""
    console = console or Console(stderr=False)
    env_cls, setup = await anyio.to_thread.run_sync(load_environment, config)
    agent = Agent.resolve(config.agent, config.modules)
    varied = tuple(config.slots) if config.slots else agent.slots
    plan = Plan(
        agent,
        varied,
        config.default,
        tuple(config.test),
        setup.tasks,
        config.repeats,
        metadata={"env": config.env},
    )
    run_dir = config.run_dir or default_run_dir(config)
    config = config.model_copy(update={"run_dir": run_dir})
    store = RunStore.open(run_dir, config.model_dump(mode="json"), result_keys=RESULT_KEYS)
    hub = EventHub()
    service = AttributionService(hub, list(varied), default_model=config.default)
    done = store.completed_episode_ids()
    for event in store.replay():
        if event.get("type") == "episode.ended" and counts(event):
            service.observe(event)
    breaker = Breaker()
    outcomes: dict[str, Outcome] = {}

    async def on_outcome(spec: EpisodeSpec, outcome: Outcome) -> None:
        outcomes[spec.episode_id] = outcome
        breaker.record(outcome)

    async with AsyncExitStack() as stack:
        sim: SimHandle | None = None
        if any(m.startswith("sim:") for m in config.models()):
            sim = await stack.enter_async_context(sim_service(config.sim))
            sim.model.add_tasks(config.env, setup.tasks)
        router = await stack.enter_async_context(LLMRouter(config.llm, sim=sim))
        factory = SpecFactory(
            plan,
            setup.factory,
            router.client,
            max_steps=config.max_steps,
            timeout_s=config.episode_timeout_s,
            trace=config.trace,
        )
        pending = [
            cell
            for cell in plan.cells()
            if episode_id(cell[0], coalition_key(varied, cell[1]), cell[2].id, cell[3]) not in done
        ]
        total = plan.size()
        runtime = Runtime(max_concurrency=config.concurrency, hub=hub)
        server: LiveServer | None = None
        stopped: str | None = None
        async with anyio.create_task_group() as tg:
            await tg.start(store.consume, hub)
            await tg.start(service.run)
            if config.progress != "off":
                progress = Progress(
                    hub,
                    total,
                    plain=None if config.progress == "auto" else config.progress == "plain",
                    done=total - len(pending),
                )
                await tg.start(progress.run)
            if config.serve:
                host, port = parse_serve(config.serve)
                server = LiveServer(
                    hub,
                    store,
                    host=host,
                    port=port,
                    token=config.token,
                    attribution=service.snapshot,
                    total=total,
                )
                url = await server.start()
                console.print(f"live dashboard: {url}")
            await hub.publish(
                RUN_STARTED,
                {
                    "run_dir": str(run_dir),
                    "total": total,
                    "pending": len(pending),
                    "slots": list(varied),
                    "default_model": config.default,
                    "test_models": list(config.test),
                    "env": config.env,
                },
            )
            with anyio.CancelScope() as scope:

                async def watch_breaker() -> None:
                    await breaker.tripped.wait()
                    scope.cancel()

                tg.start_soon(watch_breaker)
                await runtime.run(
                    _specs(factory, pending, service, config), on_outcome
                )
                if config.best:
                    await _run_best(factory, plan, service, runtime, on_outcome)
            if breaker.tripped.is_set():
                stopped = (
                    f"stopped after {breaker.streak} episodes in a row failed on the "
                    f"infrastructure; first error: {breaker.first}"
                )
            await hub.publish(
                RUN_FINISHED,
                {"episodes": runtime.finished, "errors": runtime.errors, "stopped": stopped},
            )
            if server is not None:
                await server.stop()
            hub.close()
            tg.cancel_scope.cancel()
        llm_summary = router.summary()
        stats = router.stats()

    results = build_results(service, plan=plan, llm=stats)
    store.write_json("results.json", results)
    store.write_text("results.md", render_markdown(results))
    store.close()
    console.print(render_console(results))
    return RunReport(
        run_dir=run_dir,
        results=results,
        episodes_run=runtime.finished,
        episodes_skipped=total - len(pending),
        infra_errors=breaker.total,
        llm_summary=llm_summary,
        stopped_early=stopped,
    )


def _specs(
    factory: SpecFactory, pending: list[Any], service: AttributionService, config: RunConfig
) -> Iterator[EpisodeSpec]:
    for model, coalition, task, repeat in pending:
        yield factory.build(model, coalition, task, repeat)


async def _run_best(*args: Any) -> None:
    return None


def _unused(x: AsyncIterator[Any]) -> None:
    del x, sys, InfraError
