"""The application layer: compose one evaluation from a :class:`RunConfig`.

This is the thin layer DESIGN.md allows to import ``attribution`` directly; it
finds modules and environments by name. It wires together the environment's
tasks, the simulator (when a ``sim:`` model is used), the LLM router, the run
store (resume), the attribution service, the console progress, the live
server and the runtime, then writes the results files and prints the table.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console

from agentbus import registry
from agentbus.answers import answer_line, answer_markdown, answer_summary
from agentbus.app import external
from agentbus.app.adaptive import AdaptiveScheduler
from agentbus.app.best import BestRun
from agentbus.app.config import RESULT_KEYS, RunConfig
from agentbus.app.costs import RunCost, cost_markdown, price_table, print_budget_stop
from agentbus.app.estimation import live_status, with_design
from agentbus.app.evaluation import Agent, EvaluationPlan, SpecFactory, cell_id
from agentbus.app.executor import executor_summary, llm_report, open_runtime
from agentbus.app.llm_totals import run_llm_totals
from agentbus.app.misconfig import MisconfigWatch, watch_for
from agentbus.app.pareto import ParetoRun, pareto_phase
from agentbus.app.resume_scope import check_scope
from agentbus.app.screened import evaluate_screened
from agentbus.app.summary import adaptive_line, print_summary, reward_kind
from agentbus.app.workqueue import Block, WorkQueue
from agentbus.environment import EnvSetup, Task, TaskSource
from agentbus.episode import EpisodeSpec
from agentbus.errors import UserError
from agentbus.events import RUN_FINISHED, RUN_STARTED, EventHub
from agentbus.interrupt import in_daemon_thread
from agentbus.llm.router import LLMRouter
from agentbus.llm.spec import parse_spec
from agentbus.record import EpisodeRecord, agent_failures
from agentbus.runs.progress import Progress, run_console
from agentbus.runs.server import LiveServer
from agentbus.runs.store import RunStore
from agentbus.runtime import Runtime
from agentbus.sim.profiles import ProfileSet
from agentbus.sim.service import SimHandle, sim_service
from attribution.results import (
    agent_failure_line,
    build_results,
    lead_with_stop_interval,
    stop_interval_line,
    to_markdown,
)
from attribution.service import AttributionService

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
    retried: int = 0
    given_up: int = 0


def load_environment(config: RunConfig) -> EnvSetup:
    """The environment's tasks and per-episode factory (a UserError for bad files)."""
    if external.is_external(config):
        return external.load_tasks(config)
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
    """Stops a run whose infrastructure keeps failing, or that is misconfigured.

    ``watch`` (a user's agent, without --keep-going) reads the first block of
    episodes; when it names a misconfiguration the run stops and
    :func:`evaluate` raises it as one line (exit 2).
    """

    def __init__(self, threshold: int = INFRA_BREAKER, watch: MisconfigWatch | None = None) -> None:
        self.threshold = threshold
        self.watch = watch
        self.misconfigured: str | None = None
        self.streak = 0
        self.total = 0
        self.first: str | None = None
        self.tripped = anyio.Event()
        #: the failures in a row that tripped it (episodes in flight still end afterwards,
        #: and a healthy server's success resets the running streak)
        self.tripped_at = 0

    def record(self, record: EpisodeRecord) -> None:
        if self.watch is not None and self.misconfigured is None:
            self.misconfigured = self.watch.record(record)
            if self.misconfigured is not None:
                self.tripped.set()
        if record.counts:
            self.streak = 0
            return
        self.total += 1
        self.streak += 1
        self.first = self.first or record.outcome.error
        if self.streak >= self.threshold and not self.tripped.is_set():
            self.tripped_at = self.streak
            self.tripped.set()

    def reason(self) -> str | None:
        """Why the run stopped early, if the breaker tripped."""
        if not self.tripped.is_set():
            return None
        if self.misconfigured is not None:
            return self.misconfigured
        return (
            f"stopped after {self.tripped_at} episodes in a row failed on the "
            f"infrastructure; first error: {self.first}"
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


@dataclass
class Prepared:
    """Everything decided before the first episode: plan, store, service, replayed records."""

    config: RunConfig
    setup: EnvSetup
    plan: EvaluationPlan
    run_dir: Path
    store: RunStore
    hub: EventHub
    service: AttributionService
    best: BestRun
    replayed: list[EpisodeRecord]
    #: coalition cells already counted in the log when the run began (not re-run)
    counted: int
    #: spend, budget and projected cost (issue 17)
    cost: RunCost | None = None
    #: --pareto K: the front and the assignments run for real
    pareto: ParetoRun | None = None


def check_repeats(config: RunConfig) -> None:
    """Refuse repeats that can only replay: deterministic sampling with the cache on."""
    if config.repeats <= 1:
        return
    sampling = config.llm.sampling.params()
    if sampling.deterministic and config.llm.cache != "off":
        why = "temperature 0" if sampling.temperature == 0 else "a fixed sampling seed"
        raise UserError(
            f"--repeats {config.repeats} with {why} replays the same answers from the LLM "
            "cache, so repeats would add no information; use --temperature > 0 (no "
            "--sampling-seed) for independent repeats, or --repeats 1"
        )


def make_plan(config: RunConfig, tasks: Sequence[Task]) -> EvaluationPlan:
    """The evaluation plan: the agent, the varied slots and their variants.

    The varied slots are ``slots`` when given, else the slots ``vary`` names,
    else every slot of the agent (CapaBench's game).
    """
    if external.is_external(config):
        agent = external.agent_of(config)
    else:
        agent = Agent.resolve(config.agent, config.modules)
    vary = config.variants()
    if config.slots:
        varied = tuple(config.slots)
    elif vary:
        varied = tuple(s for s in agent.slots if s in vary)
    else:
        varied = agent.slots
    if vary and config.best:
        raise UserError(
            "--best picks a model per slot, but --vary varies implementations; drop one of them"
        )
    if vary and config.pareto is not None:
        raise UserError(
            "--pareto ranks per-slot model assignments, but --vary varies implementations; "
            "drop one of them"
        )
    if config.shift is not None and config.shift not in varied:
        raise UserError(f"--shift {config.shift}: not a varied slot; varied: {', '.join(varied)}")
    return EvaluationPlan(
        agent,
        varied,
        config.default,
        tuple(config.test),
        tasks,
        config.repeats,
        metadata={"env": config.env},
        vary=vary,
    )


def manifest_of(config: RunConfig) -> dict[str, Any]:
    """The config as the manifest stores it; an empty ``vary`` is left out.

    Run directories made before ``vary`` existed have no such key, and a
    result key missing on one side only would refuse their resume.
    """
    manifest = config.model_dump(mode="json")
    if not manifest.get("vary"):
        manifest.pop("vary", None)
    return manifest


def prepare(config: RunConfig) -> Prepared:
    """Load tasks, check the plan, open (or resume) the run dir, replay what is there."""
    setup = load_environment(config)
    plan = with_design(make_plan(config, setup.tasks), config.estimator, config.seed)
    varied = plan.varied
    check_models(config)
    check_repeats(config)
    run_dir = config.run_dir or default_run_dir(config)
    config = config.model_copy(update={"run_dir": run_dir})
    prices = price_table(config)  # a bad [prices] entry is refused before anything is written
    store = RunStore.open(run_dir, manifest_of(config), result_keys=RESULT_KEYS)
    hub = EventHub()
    service = AttributionService(
        hub,
        varied,
        adaptive=config.adaptive,
        target_halfwidth=config.target_halfwidth if config.adaptive else None,
        horizon=float(config.max_episodes or plan.size()) if config.adaptive else None,
        test_models=config.test,
        ordered=True,
        estimator=config.estimator,
        stop=config.stop,
    )
    best = BestRun()
    replayed = [r for r in store.records()]
    try:
        check_scope(run_dir, setup.tasks, config.repeats, replayed)
    except UserError:
        store.close()
        raise
    for record in replayed:
        service.observe(record)
        best.observe(record)
    if config.adaptive:
        service.release_unplanned()  # adaptive blocks are not re-declared on resume
    counted = service.everything.book.count
    prep = Prepared(config, setup, plan, run_dir, store, hub, service, best, replayed, counted)
    prep.cost = RunCost(config, prices, len(setup.tasks))
    prep.cost.replay(replayed)
    if config.pareto is not None:
        prep.pareto = ParetoRun(config.pareto)
        for record in replayed:
            prep.pareto.observe(record)
    return prep


#: task blocks an adaptive run keeps in flight (per event loop), unless set
ADAPTIVE_TASKS_IN_FLIGHT = 8


def tasks_in_flight(config: RunConfig, plan: EvaluationPlan) -> int:
    """Task blocks in flight: enough to keep about 256 episodes running, at least 2.

    256 rather than fewer: episodes of one task share calls and wait on the
    environment, so a window of 128 episodes kept only about 30 requests in
    flight and cost a tenth of the throughput (benchmarks/saturation.py).

    An adaptive run holds at most ``ADAPTIVE_TASKS_IN_FLIGHT`` blocks: it can
    only stop between blocks, and everything issued before the stop still
    runs, so a wide window would spend the work the stop is meant to save (a
    two-slot game would issue 64 tasks before its first estimate).
    """
    if config.tasks_in_flight is not None:
        return config.tasks_in_flight
    per_task = plan.design_size or len(plan.coalitions)
    block = max(1, per_task * len(plan.test_models) * plan.repeats)
    per_loop = max(2, min(config.concurrency, 256) // block)
    if config.adaptive:
        per_loop = min(per_loop, ADAPTIVE_TASKS_IN_FLIGHT)
    return per_loop * (config.workers if config.executor == "ray" else 1)


def schedule_order(tasks: Sequence[Task], seed: int) -> list[Task]:
    """The tasks in a seeded random order, the same on every resume.

    The live estimate covers the first K task blocks; generators list their
    tasks in a pattern (knowledge point, then level), so in list order the
    first blocks would be the easy ones. In random order they are a random
    subset of the run's tasks, an honest sample of the whole set.
    """
    order = list(tasks)
    random.Random(f"schedule:{seed}").shuffle(order)
    return order


def coalition_blocks(prep: Prepared, factory: SpecFactory) -> Iterator[Block]:
    """The fixed plan as task blocks, skipping cells the log already counts."""
    book = prep.service.everything.book
    for task in schedule_order(prep.plan.tasks, prep.config.seed):
        cells, specs = [], []
        for cell in prep.plan.task_cells(task):
            eid = cell_id(prep.plan, cell)
            cells.append(eid)
            if not book.is_counted(eid):
                spec = factory.build(*cell)
                attempt = book.attempts(eid) + 1
                specs.append(dataclasses.replace(spec, attempt=attempt) if attempt > 1 else spec)
        yield Block(tuple(cells), tuple(specs), task.id)


async def evaluate(
    config: RunConfig,
    console: Console | None = None,
    *,
    linger: bool = False,
    on_report: Callable[[RunReport], None] | None = None,
) -> RunReport:
    """Run the whole evaluation described by ``config``: prepare, execute, finish.

    With ``--serve`` and ``linger`` (an interactive terminal), the dashboard
    stays up after the run until the task is cancelled (Ctrl-C), so its final
    state can still be read; ``on_report`` receives the report before that.
    """
    console = console or run_console()
    if config.screen == "loo":  # phase 1 (the screen), then this function on the kept slots
        return await evaluate_screened(config, console, functools.partial(evaluate, linger=linger))
    servers: list[LiveServer] = []
    try:
        prep = await in_daemon_thread(prepare, config)  # Ctrl-C during task setup works
        try:
            execution = await execute(prep, console, servers)
            if execution.breaker.misconfigured is not None:  # one line, exit 2
                raise UserError(execution.breaker.misconfigured)
            report = finish(prep, execution, console)
        finally:
            prep.store.close()
        if on_report is not None:
            on_report(report)
        if servers and linger:
            console.print(
                f"run finished; the dashboard stays up at {servers[0].url} (Ctrl-C to stop it)"
            )
            await anyio.sleep_forever()
        elif servers:  # not interactive: the server ends with the run; the log stays viewable
            console.print(
                "run finished; the dashboard stops with this process; "
                f"reopen it with: python -m agentbus.view {report.run_dir}"
            )
        return report
    finally:
        with anyio.CancelScope(shield=True):
            for server in servers:
                await server.stop()


@dataclass
class Execution:
    """What running the episodes left behind for the results."""

    runtime: Runtime
    breaker: Breaker
    queue: WorkQueue
    adaptive: AdaptiveScheduler | None
    total: int
    llm_summary: str
    llm_stats: dict[str, Any]


def _work(prep: Prepared, factory: SpecFactory) -> tuple[WorkQueue, AdaptiveScheduler | None, int]:
    """The work queue of the coalition episodes (fixed plan or adaptive) and its total."""
    config, service = prep.config, prep.service

    def declare(ident: int, block: Block) -> None:
        service.expect(ident, block.cells, block.task)
        if prep.cost is not None:
            prep.cost.estimate.expect(ident, block.cells, block.task)

    def give_up(cell: str) -> None:
        service.give_up(cell)
        if prep.cost is not None:
            prep.cost.estimate.give_up(cell)

    adaptive: AdaptiveScheduler | None = None
    source: Iterator[Block] | AdaptiveScheduler
    if config.adaptive:
        adaptive = AdaptiveScheduler(
            factory,
            service,
            tasks=prep.setup.tasks,
            test_models=config.test,
            target_halfwidth=config.target_halfwidth,
            max_episodes=config.max_episodes,
            deterministic=config.llm.sampling.params().deterministic,
            done=prep.replayed,
            seed=config.seed,
        )
        source, total = adaptive, config.max_episodes or prep.plan.size()
    else:
        source, total = coalition_blocks(prep, factory), prep.plan.size()
    queue = WorkQueue(
        source,
        window=tasks_in_flight(config, prep.plan),
        max_attempts=config.attempts,
        on_block=declare,
        on_give_up=give_up,
    )
    return queue, adaptive, total


async def execute(prep: Prepared, console: Console, servers: list[LiveServer]) -> Execution:
    """Start the simulator, router, log writer, service, progress and server; run."""
    config = prep.config
    async with AsyncExitStack() as stack:
        sim: SimHandle | None = None
        if any(m.startswith("sim:") for m in config.models()):
            sim = await stack.enter_async_context(sim_service(_sim_config(config)))
            sim.model.add_tasks(config.env, prep.setup.tasks)
        llm_config = config.llm
        if llm_config.cache_dir is None:  # a resumed run replays the calls it already paid for
            llm_config = llm_config.model_copy(update={"cache_dir": prep.run_dir})
        router = await stack.enter_async_context(LLMRouter(llm_config, sim=sim))
        actors_for = None
        if external.is_external(config):  # your own agent, through the module gateway
            actors_for = await stack.enter_async_context(
                external.external_agent(config, router.client)
            )
        factory = SpecFactory(
            prep.plan,
            prep.setup.factory,
            router.client,
            max_steps=config.max_steps,
            timeout_s=config.episode_timeout_s,
            trace=config.trace,
            actors_for=actors_for,
        )
        queue, adaptive, total = _work(prep, factory)
        runtime = await stack.enter_async_context(
            open_runtime(config, max_concurrency=config.concurrency, hub=prep.hub)
        )
        if config.follow_capacity and type(runtime) is Runtime:
            for model in config.models():  # clients now, so their capacity counts from the start
                router.client(model)
            runtime.capacity = router.capacity
        breaker = Breaker(watch=watch_for(config, prep.plan))
        if prep.cost is not None:
            runtime.prices = prep.cost.prices  # every record is priced as it is built
            prep.cost.watch(router.stats)
            note = prep.cost.unpriced_note()
            if note:
                console.print(note)
        async with anyio.create_task_group() as tg:
            await tg.start(prep.store.consume, prep.hub)
            if config.progress != "off":
                plain = None if config.progress == "auto" else config.progress == "plain"
                projection = prep.service if config.adaptive else None
                status = live_status(router.rate_limit_note, projection)
                progress = Progress(
                    prep.hub,
                    total,
                    plain=plain,
                    done=prep.counted,
                    status=status,
                    served=router.served_split,
                    total_is_cap=config.adaptive,
                    console=console,
                )
                await tg.start(progress.run)
            server = await _start_server(config, prep.hub, prep.store, prep.service, total, console)
            if server is not None:
                servers.append(server)
            await prep.hub.publish(RUN_STARTED, _run_started(prep, total))
            async with anyio.create_task_group() as ticking:  # periodic snapshots
                ticking.start_soon(functools.partial(prep.service.run, subscribe=False))
                await _run_episodes(prep, factory, runtime, queue, breaker, console)
                ticking.cancel_scope.cancel()
            await prep.service.publish_snapshot()  # the final estimate, before run.finished
            await prep.hub.publish(
                RUN_FINISHED,
                {
                    "episodes": runtime.finished,
                    "errors": runtime.errors,
                    "stopped": breaker.reason() or (prep.cost.stopped if prep.cost else None),
                    "failures": prep.service.everything.book.failure_summary(),
                },
            )
            prep.hub.close()
        llm_summary, llm_stats = await llm_report(router, runtime)
        return Execution(runtime, breaker, queue, adaptive, total, llm_summary, llm_stats)


def _run_started(prep: Prepared, total: int) -> dict[str, Any]:
    config = prep.config
    return {
        "run_dir": str(prep.run_dir),
        "total": total,
        "done": prep.counted,
        "slots": list(prep.plan.varied),
        "default_model": config.default,
        "test_models": list(config.test),
        "env": config.env,
        **(
            {"variants": {m: prep.plan.variant_labels(m) for m in prep.plan.test_models}}
            if prep.plan.vary
            else {}
        ),
    }


async def _run_episodes(
    prep: Prepared,
    factory: SpecFactory,
    runtime: Runtime,
    queue: WorkQueue,
    breaker: Breaker,
    console: Console,
) -> None:
    """The coalition episodes, then (with ``--best``) the best-combination agent."""

    async def on_outcome(spec: EpisodeSpec, record: EpisodeRecord) -> None:
        breaker.record(record)
        prep.service.observe(record)
        active.settle(spec, record)
        prep.best.observe(record)
        if prep.pareto is not None:
            prep.pareto.observe(record)
        if prep.cost is not None:
            await prep.cost.observe(record, prep.hub, console)

    active = queue
    async with anyio.create_task_group() as work:

        async def watch_breaker() -> None:
            # no new episodes; those in flight end on their own (an episode on a
            # healthy server finishes and counts, one on the failing server fails
            # after its retries), instead of cancelling every model's work at once
            await breaker.tripped.wait()
            active.stop()

        work.start_soon(watch_breaker)
        await runtime.run(_gated(prep, queue, runtime), on_outcome)
        if breaker.tripped.is_set():
            work.cancel_scope.cancel()
            return
        if prep.config.best:
            assignment = prep.best.choose(prep.service, prep.plan)
            if assignment is None:
                console.print(
                    "--best skipped: phi is not estimable for every test model "
                    "(some coalition has no counted episode)"
                )
            else:
                blocks = prep.best.blocks(factory, assignment, prep.setup.tasks)
                active = WorkQueue(blocks, window=1 << 30, max_attempts=prep.config.attempts)
                await runtime.run(_gated(prep, active, runtime), on_outcome)
        if prep.pareto is not None and not (prep.cost and prep.cost.stopped):
            chosen = await pareto_phase(
                prep.pareto,
                prep.service.everything.book.records("coalition"),
                prep.plan,
                factory,
                prep.setup.tasks,
                prep.hub.publish,
                console,
            )
            if chosen is not None:
                active = WorkQueue(chosen, window=4, max_attempts=prep.config.attempts)
                await runtime.run(_gated(prep, active, runtime), on_outcome)
        work.cancel_scope.cancel()


def _gated(prep: Prepared, queue: WorkQueue, runtime: Runtime) -> Any:
    """The queue's episodes under the run's budget (``--budget-usd``, ``--budget-tokens``)."""
    if prep.cost is None:
        return queue
    return prep.cost.gated(aiter(queue), queue.stop, lambda: int(getattr(runtime, "in_flight", 0)))


def _write_plots(results: dict[str, Any], out_dir: Path, console: Console) -> None:
    """The figures; a figure that cannot be drawn is one line, never the end of the run.

    By now results.json and results.md are written: a plotting failure (a full
    disk, a value matplotlib refuses) must not turn a finished run into a
    traceback.
    """
    # imported here: matplotlib costs a run without plots a second of start-up
    from attribution.plots import write_plots

    try:
        write_plots(results, out_dir)
        if results.get("pareto"):
            from attribution.pareto_plot import plot_front

            plot_front(results["pareto"], out_dir)
    except Exception as exc:  # any plotting failure is reported, not raised
        console.print(f"plots not written ({type(exc).__name__}: {exc}); results.json is complete")


def finish(prep: Prepared, execution: Execution, console: Console) -> RunReport:
    """Results from every counted record, the results files and the console table."""
    config, service = prep.config, prep.service
    results = build_results(
        service.everything,
        confidence=service.confidence,
        horizon=service.horizon,
        estimator=service.estimator_name,
        shift=config.shift,
    )
    results["env"] = config.env
    if config.preset is not None:
        results["preset"] = config.preset
    # models/total: this process's router; run: every process's attempts, summed from the log
    results["llm"] = {**execution.llm_stats, "run": run_llm_totals(prep.run_dir / "events.jsonl")}
    results["failures"] = service.everything.book.failure_summary()
    gateway = None
    if external.is_external(config):  # calls per module, refusals, agents that gave no result
        gateway = results["gateway"] = external.summary(service.everything.book.records())
        results["agent_failures"] = agent_failures(service.everything.book.records("coalition"))
    slots = results.get("slots") or []
    results["answers"] = answer_summary(service.everything.book.records(), slots)
    results["reward_kind"] = reward_kind(service.everything.book.records())
    executor = executor_summary(execution.runtime)
    if executor is not None:
        results["executor"] = executor
    adaptive = execution.adaptive
    if adaptive is not None:
        results["adaptive"] = {
            "target_halfwidth": config.target_halfwidth,
            "stop": config.stop,
            "stop_reason": adaptive.stop_reason,
            "done": adaptive.reached,
        }
        lead_with_stop_interval(results, config.stop)
    best_summary = prep.best.summary()
    if best_summary is not None:
        results["best_run"] = best_summary
    if prep.cost is not None:
        counted = list(service.everything.book.records())
        if prep.pareto is not None:
            counted += list(prep.pareto.book.records())
        results["cost"] = prep.cost.results(counted, list(prep.plan.varied), prep.run_dir)
    if prep.pareto is not None and prep.pareto.points:
        prep.pareto.measure()
        results["pareto"] = prep.pareto.results()
    prep.store.write_json("results.json", results)
    markdown = to_markdown(results) + answer_markdown(results) + cost_markdown(results)
    prep.store.write_text("results.md", markdown)
    if config.plots:
        _write_plots(results, prep.run_dir / "plots", console)
    note = external.summary_line(gateway, config.unmapped) if gateway is not None else None
    print_summary(
        results,
        console,
        show_details=config.details,
        notes=[agent_failure_line(results), note, answer_line(results["answers"])],
    )
    print_budget_stop(results, console, prep.run_dir)
    if adaptive is not None:
        console.print(adaptive_line(adaptive.stop_reason, adaptive.reached, config.stop))
        if adaptive.stop_reason:
            console.print(stop_interval_line(results))
    return RunReport(
        run_dir=prep.run_dir,
        results=results,
        episodes_run=execution.runtime.finished,
        episodes_skipped=prep.counted,
        infra_errors=execution.breaker.total,
        llm_summary=execution.llm_summary,
        stopped_early=execution.breaker.reason(),
        retried=execution.queue.retried,
        given_up=len(execution.queue.given_up),
    )
