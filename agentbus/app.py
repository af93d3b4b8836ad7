"""The application layer: compose one evaluation from a :class:`RunConfig`.

This is the thin layer DESIGN.md allows to import ``attribution`` directly; it
finds modules and environments by name. It wires together the environment's
tasks, the simulator (when a ``sim:`` model is used), the LLM router, the run
store (resume), the attribution service, the console progress, the live
server and the runtime, then writes the results files and prints the table.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console

from agentbus import registry
from agentbus.config import RESULT_KEYS, RunConfig
from agentbus.environment import EnvSetup, TaskSource
from agentbus.episode import EpisodeSpec
from agentbus.errors import UserError
from agentbus.evaluation import Agent, Plan, SpecFactory, cell_id
from agentbus.events import EPISODE_ENDED, RUN_FINISHED, RUN_STARTED, EventHub
from agentbus.llm.router import LLMRouter
from agentbus.llm.spec import parse_spec
from agentbus.outcome import Outcome
from agentbus.progress import Progress
from agentbus.runtime import Runtime
from agentbus.server import LiveServer
from agentbus.sim.profiles import ProfileSet
from agentbus.sim.service import SimHandle, sim_service
from agentbus.store import RunStore, counts
from attribution.plots import write_plots
from attribution.results import build_results, render_console, to_markdown
from attribution.scheduler import AdaptiveSource
from attribution.service import AttributionService

#: stop early when this many episodes in a row failed on the infrastructure
INFRA_BREAKER = 25
BEST = "best"


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


def load_environment(config: RunConfig) -> EnvSetup:
    """The environment's tasks and per-episode factory (a UserError for bad files)."""
    env_cls = registry.get("environments", config.env)
    source = TaskSource(
        dataset=config.dataset,
        knowledge=config.knowledge,
        count=config.tasks,
        seed=config.seed,
        limit=config.limit,
    )
    setup: EnvSetup = env_cls.setup(source)
    if not setup.tasks:
        raise UserError(f"environment {config.env!r} produced no tasks")
    return setup


def check_models(config: RunConfig) -> None:
    """Refuse bad model specs and unknown sim profiles before anything is written."""
    profiles = ProfileSet(config.sim.profiles)
    for model in config.models():
        spec = parse_spec(model)
        if spec.backend == "sim":
            profiles.get(spec.model)


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
        if outcome.counts_for_value:
            self.streak = 0
            return
        self.total += 1
        self.streak += 1
        self.first = self.first or outcome.error
        if self.streak >= self.threshold:
            self.tripped.set()


class BestRun:
    """The best-combination agent: each slot on the model with the highest phi."""

    def __init__(self) -> None:
        self.assignment: dict[str, str] | None = None
        self.rewards: dict[str, float] = {}

    def observe(self, payload: dict[str, Any]) -> None:
        if payload.get("kind") == BEST and counts(payload):
            self.assignment = dict(payload.get("assignment") or {})
            self.rewards[str(payload["episode_id"])] = float(payload["outcome"]["reward"])

    def choose(self, service: AttributionService, plan: Plan) -> dict[str, str] | None:
        """Per varied slot the test model with the largest positive phi, else the default."""
        best: dict[str, str] = {slot: plan.default_model for slot in plan.agent.slots}
        for slot in plan.varied:
            top = 0.0
            for model in plan.test_models:
                est = service.estimates(model)
                if est is None:
                    return None
                value = est.value(slot)
                if value > top:
                    top, best[slot] = value, model
        return best

    def summary(self) -> dict[str, Any] | None:
        if not self.rewards:
            return None
        n = len(self.rewards)
        return {"assignment": self.assignment, "n": n, "acc": sum(self.rewards.values()) / n}


def _best_specs(
    factory: SpecFactory, assignment: dict[str, str], tasks: Iterable[Any], done: set[str]
) -> Iterator[EpisodeSpec]:
    label = "+".join(f"{slot}={model}" for slot, model in assignment.items())
    for task in tasks:
        eid = f"{BEST}|{label}|{task.id}|r0"
        if eid not in done:
            yield factory.build_assignment(
                assignment,
                task,
                0,
                episode=eid,
                metadata={"kind": BEST, "default_model": factory.plan.default_model},
            )


def _sim_config(config: RunConfig) -> Any:
    """The simulator only needs the expert of the environment being run."""
    if config.sim.experts is not None:
        return config.sim
    known = registry.names("experts")
    return config.sim.model_copy(update={"experts": [config.env] if config.env in known else []})


async def _start_server(
    config: RunConfig,
    hub: EventHub,
    store: RunStore,
    service: AttributionService,
    total: int,
    console: Console,
) -> LiveServer | None:
    if not config.serve:
        return None
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
    return server


async def evaluate(
    config: RunConfig,
    console: Console | None = None,
    *,
    linger: bool = False,
    on_report: Callable[[RunReport], None] | None = None,
) -> RunReport:
    """Run the whole evaluation described by ``config``.

    With ``--serve`` and ``linger`` (an interactive terminal), the dashboard
    stays up after the run until the task is cancelled (Ctrl-C), so its final
    state can still be read; ``on_report`` receives the report before that.
    """
    console = console or Console()
    servers: list[LiveServer] = []
    try:
        report = await _evaluate(config, console, servers)
        if on_report is not None:
            on_report(report)
        if servers and linger:
            console.print(
                f"run finished; the dashboard stays up at {servers[0].url} (Ctrl-C to stop it)"
            )
            await anyio.sleep_forever()
        return report
    finally:
        with anyio.CancelScope(shield=True):
            for server in servers:
                await server.stop()


async def _evaluate(config: RunConfig, console: Console, servers: list[LiveServer]) -> RunReport:
    setup = await anyio.to_thread.run_sync(load_environment, config)
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
    check_models(config)
    run_dir = config.run_dir or default_run_dir(config)
    config = config.model_copy(update={"run_dir": run_dir})
    store = RunStore.open(run_dir, config.model_dump(mode="json"), result_keys=RESULT_KEYS)
    hub = EventHub()
    service = AttributionService(
        hub,
        varied,
        adaptive=config.adaptive,
        target_halfwidth=config.target_halfwidth if config.adaptive else None,
        horizon=float(config.max_episodes or plan.size()) if config.adaptive else None,
        test_models=config.test,
    )
    best = BestRun()
    for event in store.replay():
        if event.get("type") == EPISODE_ENDED and counts(event):
            service.observe(event)
            best.observe(event)
    done = store.completed_episode_ids()
    breaker = Breaker()
    retry: list[EpisodeSpec] = []

    async def on_outcome(spec: EpisodeSpec, outcome: Outcome) -> None:
        breaker.record(outcome)
        if not outcome.counts_for_value:
            retry.append(spec)
        elif spec.metadata.get("kind") == BEST:
            best.observe(
                {**spec.metadata, "episode_id": spec.episode_id, "outcome": outcome.model_dump()}
            )

    async with AsyncExitStack() as stack:
        sim: SimHandle | None = None
        if any(m.startswith("sim:") for m in config.models()):
            sim = await stack.enter_async_context(sim_service(_sim_config(config)))
            sim.model.add_tasks(config.env, setup.tasks)
        llm_config = config.llm
        if llm_config.cache_dir is None:  # a resumed run replays the calls it already paid for
            llm_config = llm_config.model_copy(update={"cache_dir": run_dir})
        router = await stack.enter_async_context(LLMRouter(llm_config, sim=sim))
        factory = SpecFactory(
            plan,
            setup.factory,
            router.client,
            max_steps=config.max_steps,
            timeout_s=config.episode_timeout_s,
            trace=config.trace,
        )
        source: Any
        adaptive: AdaptiveSource | None = None
        if config.adaptive:
            adaptive = AdaptiveSource(
                factory,
                service,
                tasks=setup.tasks,
                test_models=config.test,
                target_halfwidth=config.target_halfwidth,
                max_episodes=config.max_episodes,
                deterministic=config.llm.sampling.params().deterministic,
                done_ids=done,
            )
            source = adaptive
            total = config.max_episodes or plan.size()
            skipped = service.collector.episodes
        else:
            pending = [cell for cell in plan.cells() if cell_id(plan, cell) not in done]
            source = (factory.build(*cell) for cell in pending)
            total = plan.size()
            skipped = total - len(pending)
        concurrency = config.concurrency
        if adaptive is not None:
            # keep few episodes in flight so each pick sees recent outcomes
            concurrency = min(concurrency, 4 * len(plan.coalitions) * len(plan.test_models))
        runtime = Runtime(max_concurrency=concurrency, hub=hub)
        async with anyio.create_task_group() as tg:
            await tg.start(store.consume, hub)
            await tg.start(service.run)
            if config.progress != "off":
                plain = None if config.progress == "auto" else config.progress == "plain"
                await tg.start(Progress(hub, total, plain=plain, done=skipped).run)
            server = await _start_server(config, hub, store, service, total, console)
            if server is not None:
                servers.append(server)
            await hub.publish(
                RUN_STARTED,
                {
                    "run_dir": str(run_dir),
                    "total": total,
                    "done": skipped,
                    "slots": list(varied),
                    "default_model": config.default,
                    "test_models": list(config.test),
                    "env": config.env,
                },
            )
            async with anyio.create_task_group() as work:

                async def watch_breaker() -> None:
                    await breaker.tripped.wait()
                    work.cancel_scope.cancel()

                work.start_soon(watch_breaker)
                await runtime.run(source, on_outcome)
                if retry:  # infrastructure failures get one more try
                    again, retry[:] = list(retry), []
                    await runtime.run(again, on_outcome)
                if config.best:
                    assignment = best.choose(service, plan)
                    if assignment is None:
                        console.print(
                            "--best skipped: some coalition has no outcome yet, so phi "
                            "is not estimable for every test model"
                        )
                    else:
                        await runtime.run(
                            _best_specs(factory, assignment, setup.tasks, done), on_outcome
                        )
                work.cancel_scope.cancel()
            stopped = None
            if breaker.tripped.is_set():
                stopped = (
                    f"stopped after {breaker.streak} episodes in a row failed on the "
                    f"infrastructure; first error: {breaker.first}"
                )
            await hub.publish(
                RUN_FINISHED,
                {"episodes": runtime.finished, "errors": runtime.errors, "stopped": stopped},
            )
            hub.close()
        llm_summary = router.summary()
        llm_stats = router.stats()

    results = build_results(
        service.collector, confidence=service.confidence, horizon=service.horizon
    )
    results["env"] = config.env
    results["llm"] = llm_stats
    if adaptive is not None:
        results["adaptive"] = {
            "target_halfwidth": config.target_halfwidth,
            "stop_reason": adaptive.stop_reason,
            "done": service.done(config.target_halfwidth),
        }
    best_summary = best.summary()
    if best_summary is not None:
        results["best_run"] = best_summary
    store.write_json("results.json", results)
    store.write_text("results.md", to_markdown(results))
    write_plots(results, run_dir / "plots")
    store.close()
    console.print(render_console(results))
    if adaptive is not None and adaptive.stop_reason:
        console.print(f"adaptive run stopped: {adaptive.stop_reason}")
    return RunReport(
        run_dir=run_dir,
        results=results,
        episodes_run=runtime.finished,
        episodes_skipped=skipped,
        infra_errors=breaker.total,
        llm_summary=llm_summary,
        stopped_early=stopped,
    )
