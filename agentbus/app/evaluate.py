"""The application layer: compose one evaluation from a :class:`RunConfig`.

This is the thin layer DESIGN.md allows to import ``attribution`` directly; it
finds modules and environments by name. It wires together the environment's
tasks, the simulator (when a ``sim:`` model is used), the LLM router, the run
store (resume), the attribution service, the console progress, the live
server and the runtime, then writes the results files and prints the table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console

from agentbus.app import external, inspect_run
from agentbus.app.adaptive import AdaptiveScheduler
from agentbus.app.answers import answer_line, answer_markdown, answer_summary
from agentbus.app.breaker import Breaker
from agentbus.app.config import RunConfig
from agentbus.app.costs import cost_markdown, print_budget_stop
from agentbus.app.estimation import live_status
from agentbus.app.evaluation import SpecFactory
from agentbus.app.executor import executor_summary, llm_report, open_runtime
from agentbus.app.llm_totals import run_llm_totals
from agentbus.app.misconfig import watch_for
from agentbus.app.pareto import pareto_phase
from agentbus.app.preparation import (  # the old import paths of these names stay valid
    Prepared,
    prepare,
    sim_config,
)
from agentbus.app.schedule import plan_work
from agentbus.app.screened import evaluate_screened
from agentbus.app.summary import adaptive_line, print_summary, reward_kind
from agentbus.app.workqueue import WorkQueue
from agentbus.core.episode import EpisodeSpec
from agentbus.core.errors import UserError
from agentbus.core.events import RUN_FINISHED, RUN_STARTED, EventHub
from agentbus.core.interrupt import in_daemon_thread
from agentbus.core.record import EpisodeRecord, agent_failures
from agentbus.executors.runtime import Runtime
from agentbus.llm.router import LLMRouter
from agentbus.runs.progress import Progress, run_console
from agentbus.runs.server import LiveServer
from agentbus.runs.store import RunStore
from agentbus.sim.service import SimHandle, sim_service
from attribution.results import build_results
from attribution.service import AttributionService
from attribution.stop_interval import lead_with_stop_interval, stop_interval_line
from attribution.tables import agent_failure_line, to_markdown


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


async def execute(prep: Prepared, console: Console, servers: list[LiveServer]) -> Execution:
    """Start the simulator, router, log writer, service, progress and server; run."""
    config = prep.config
    async with AsyncExitStack() as stack:
        sim: SimHandle | None = None
        if any(m.startswith("sim:") for m in config.models()):
            sim = await stack.enter_async_context(sim_service(sim_config(config)))
            sim.model.add_tasks(config.env, prep.setup.tasks)
        llm_config = config.llm
        if llm_config.cache_dir is None:  # a resumed run replays the calls it already paid for
            llm_config = llm_config.model_copy(update={"cache_dir": prep.run_dir})
        router = await stack.enter_async_context(LLMRouter(llm_config, sim=sim))
        actors_for = None
        if external.is_external(config):  # your own agent, through the module gateway
            actors_for = await stack.enter_async_context(
                external.external_agent(config, router.client, prep.run_dir)
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
        queue, adaptive, total = plan_work(prep, factory)
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
    inspect_run.finish(config, results, service.everything.book.records())  # --inspect
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
