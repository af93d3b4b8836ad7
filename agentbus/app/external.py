"""Composing a run of an external agent (``--agent MODULE:FUNC``, ``--agent-cmd``, ``--agent-url``).

The user's agent lives in its own code; this layer turns the run config into
the pieces the kernel's gateway needs: the agent's slots (``--slots``: the
module names its components use as ``model``), the tasks (a JSONL file, or a
built-in environment's static tasks) with the run's scorer, the gateway
server and the runner, and one episode's actors per coalition (a
:class:`~agentbus.gateway.actors.GatewaySlot` per slot that is on, plus the
driver). Everything else (plan, router, store, attribution) is the same as for
agentbus's own agents.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentbus.app import inspect_run
from agentbus.core import registry
from agentbus.core.environment import EnvSetup
from agentbus.core.episode import ActorSpec
from agentbus.core.errors import UserError
from agentbus.core.record import EpisodeRecord
from agentbus.gateway import sandbox
from agentbus.gateway.actors import DRIVER, AgentDriver, DriverConfig, EpisodeLink, GatewaySlot
from agentbus.gateway.agent_log import AGENT_LOG, AgentLog
from agentbus.gateway.auto_workers import AutoCommandAgent
from agentbus.gateway.environment import ExternalEnvironment
from agentbus.gateway.isolation import NONE_WARNING, Isolation, replay_isolation
from agentbus.gateway.limits import MIB, Limits
from agentbus.gateway.machine import machine_cpus
from agentbus.gateway.runners import AgentRunner, CallableAgent, CommandAgent, HttpAgent
from agentbus.gateway.scorers import TRUST_RESULT, load_scorer
from agentbus.gateway.server import Gateway
from agentbus.gateway.tasks import ENV
from agentbus.gateway.threads import roomy_default_executor
from agentbus.gateway.workers import WorkerAgent
from agentbus.llm.types import LLM

if TYPE_CHECKING:
    from agentbus.app.config import RunConfig
    from agentbus.app.evaluation import Agent, Resolved

#: workers per CPU (16 at most) when --agent-processes is not given (a process per
#: episode: one per CPU)
WORKERS_PER_CPU = 4
#: the module name every slot of an external agent is filled with
SLOT_MODULE = "gateway.slot"

registry.register("modules", SLOT_MODULE, GatewaySlot)
registry.register("environments", ENV, ExternalEnvironment)


def is_external(config: RunConfig) -> bool:
    """Whether the run's agent is the user's own (callable, command or service)."""
    return (
        ":" in config.agent
        or config.agent_cmd is not None
        or config.agent_url is not None
        or config.inspect is not None
    )


def check(config: RunConfig) -> None:
    """Refuse contradictory or incomplete external-agent settings (one line each)."""
    given = [
        flag
        for flag, on in (
            ("--agent MODULE:FUNC", ":" in config.agent),
            ("--agent-cmd", config.agent_cmd is not None),
            ("--agent-url", config.agent_url is not None),
            ("--inspect", config.inspect is not None),
        )
        if on
    ]
    if len(given) > 1:
        raise UserError(f"give one way to run the agent, not {' and '.join(given)}")
    if config.inspect_log is not None and config.inspect is None:
        raise UserError("--inspect-log writes an Inspect task's run as logs: give --inspect")
    if config.agent_workers and config.agent_cmd is None:
        raise UserError("--agent-workers runs an --agent-cmd as long-lived workers: give one")
    if not given:
        for key, flag in (("scorer", "--scorer"), ("unmapped", "--unmapped")):
            if getattr(config, key) is not None:
                raise UserError(
                    f"{flag} applies to your own agent (--agent MODULE:FUNC, "
                    "--agent-cmd or --agent-url)"
                )
        return
    if not config.slots:
        raise UserError(
            "your own agent needs --slots: the module names its components send as "
            "'model' (python -m agentbus.discover lists them), e.g. --slots planner,solver"
        )
    if config.modules:
        raise UserError("--module replaces agentbus's own modules; your agent has its own")
    if config.executor != "local":
        raise UserError(
            "your own agent runs with --executor local (the gateway is in this process)"
        )
    for slot, pair in config.variants().items():
        if any(v.module is not None for v in pair):
            raise UserError(
                f"--vary {slot}=...: your agent's modules are its own code, so a side can be "
                "off, on or @MODEL, not an agentbus module"
            )
    if config.inspect is not None:
        inspect_run.check(config)
    if config.scorer is not None:
        load_scorer(config.scorer)


def agent_of(config: RunConfig) -> Agent:
    """The external agent as the plan sees it: its slots, each a gateway slot."""
    from agentbus.app.evaluation import Agent

    slots = tuple(config.slots or ())
    return Agent(slots, {slot: SLOT_MODULE for slot in slots})


def load_tasks(config: RunConfig) -> EnvSetup:
    """The tasks (JSONL file, or a built-in environment's) and the scoring environment."""
    if config.inspect is not None:
        return inspect_run.load_tasks(config)
    scorer = load_scorer(config.scorer) if config.scorer is not None else None
    factory = functools.partial(ExternalEnvironment, scorer)
    source = config.task_source()
    if config.env == ENV:
        return EnvSetup(ExternalEnvironment.setup(source).tasks, factory)
    setup: EnvSetup = registry.get("environments", config.env).setup(source)
    if not any("answer" in t.hidden for t in setup.tasks):
        raise UserError(
            f"environment {config.env!r} has no static answers to score an external "
            'agent with; give --dataset FILE.jsonl with an "answer" per task'
        )
    return EnvSetup(setup.tasks, factory)


def isolation_of(config: RunConfig) -> Isolation:
    """How the run confines command agents (the run directory and cache stay out of sight)."""
    hidden = [p for p in (config.run_dir, config.llm.cache_dir) if p is not None]
    return Isolation(
        mode=config.agent_isolation,
        memory_mb=config.agent_memory_mb,
        cpu_s=config.agent_timeout_s,
        disk_mb=config.agent_disk_mb,
        paths=tuple(config.agent_paths),
        hidden=tuple(hidden),
    )


def replay_config(config: RunConfig, allow_none: bool, paths: Sequence[Path] = ()) -> RunConfig:
    """A run's config as a replay (blame) may use it: its agent isolation never looser than
    the defaults, unless this command line says so (:func:`replay_isolation`)."""
    if config.agent_cmd is None:
        return config
    safe = replay_isolation(isolation_of(config), allow_none=allow_none, paths=paths)
    return config.model_copy(
        update={
            # a replay is a process per episode unless the run forced workers
            "agent_workers": config.agent_workers or False,
            "agent_isolation": safe.mode,
            "agent_memory_mb": safe.memory_mb,
            "agent_disk_mb": safe.disk_mb,
            "agent_paths": list(safe.paths),
        }
    )


def notes(config: RunConfig) -> list[str]:
    """Console lines for choices that loosen what the agent is held to."""
    out = []
    if config.agent_cmd is not None and config.agent_isolation == "none":
        out.append(NONE_WARNING)
    if config.scorer == TRUST_RESULT:
        out.append(
            "--scorer result: each episode's reward is the one your agent reports; "
            "agentbus checks no answer"
        )
    return out


def say(line: str) -> None:
    """A console line of the run (stderr, beside the other ``agentbus:`` lines)."""
    print(f"agentbus: {line}", file=sys.stderr)


def make_runner(
    config: RunConfig,
    cwd: Path | None = None,
    notice: Callable[[str], None] = say,
    log: AgentLog | None = None,
) -> AgentRunner:
    """The runner of the run's agent; a command runs as workers when it answers the
    handshake unless ``--agent-workers``/``--no-agent-workers`` decided (``notice`` says
    which it got). The agent's own output goes to ``log`` (the run's agent.log)."""
    limit = config.agent_timeout_s
    if config.inspect is not None:
        return inspect_run.make_runner(config)
    if config.agent_cmd is not None:
        isolation = isolation_of(config)
        sandbox.check(isolation)
        options: dict[str, Any] = {
            "time_limit_s": limit,
            "max_processes": config.agent_processes,
            "cwd": cwd,
            "isolation": isolation,
            "output_cap": int(config.agent_output_mb * MIB),
            "log": log,
        }
        # workers mostly wait for the model, so more of them than CPUs pay (started one
        # at a time, while episodes wait); --agent-processes sets the number either way
        given = "agent_processes" in config.model_fields_set
        workers = config.agent_processes if given else min(WORKERS_PER_CPU * machine_cpus(), 16)
        if config.agent_workers is None:
            return AutoCommandAgent(config.agent_cmd, notice=notice, workers=workers, **options)
        if config.agent_workers:
            return WorkerAgent(config.agent_cmd, **{**options, "max_processes": workers})
        return CommandAgent(config.agent_cmd, **options)
    if config.agent_url is not None:
        return HttpAgent(config.agent_url, time_limit_s=limit)
    return CallableAgent(config.agent, time_limit_s=limit, log=log)


def summary(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """Run-level gateway figures: calls per module, refused, unknown and unmapped modules."""
    calls: dict[str, int] = {}
    refused: dict[str, int] = {}
    unmapped: set[str] = set()
    unknown: set[str] = set()
    failed = 0
    for record in records:
        details = record.outcome.details
        gateway = details.get("gateway") or {}
        for module, stats in (gateway.get("modules") or {}).items():
            calls[module] = calls.get(module, 0) + int(stats.get("calls", 0))
        for module, count in (gateway.get("refused") or {}).items():
            refused[module] = refused.get(module, 0) + int(count)
        unmapped.update(gateway.get("unmapped") or ())
        unknown.update(gateway.get("unknown") or ())
        failed += "agent_error" in details
    out: dict[str, Any] = {"calls": calls, "agent_failures": failed}
    if refused:
        out["refused"] = refused
    if unmapped:
        out["unmapped"] = sorted(unmapped)
    if unknown:
        out["unknown"] = sorted(unknown)
    return out


def summary_line(figures: dict[str, Any], unmapped_model: str | None = None) -> str | None:
    """One console line when the gateway refused or redirected calls.

    Calls to a module that is no slot go to ``--unmapped MODEL`` when one was
    given, and are refused otherwise: the line says which happened. The
    agent's failures have their own line (``agent_failure_line``).
    """
    parts = []
    unknown = set(figures.get("unknown") or ())
    refused = figures.get("refused") or {}
    off = {m: n for m, n in refused.items() if m not in unknown}
    if off:
        parts.append(
            "calls to switched-off modules refused: "
            + ", ".join(f"{m} {n}" for m, n in sorted(off.items()))
        )
    if unknown:
        parts.append(
            "calls to modules that are no slot refused (no --unmapped given): "
            + ", ".join(f"{m} {refused.get(m, 0)}" for m in sorted(unknown))
        )
    if figures.get("unmapped"):
        target = f" ({unmapped_model})" if unmapped_model else ""
        parts.append(f"modules sent to --unmapped{target}: " + ", ".join(figures["unmapped"]))
    return "gateway: " + "; ".join(parts) if parts else None


ActorsFor = Callable[["Resolved"], list[ActorSpec]]


@asynccontextmanager
async def external_agent(
    config: RunConfig, client: Callable[[str], LLM], run_dir: Path | None = None
) -> AsyncIterator[ActorsFor]:
    """Start the gateway and the runner; yield how to build one episode's actors.

    The agent's own output (its frameworks' logs, its stderr) goes to
    ``run_dir``/agent.log, named on the console when the first line lands.
    """
    log = AgentLog(run_dir / AGENT_LOG if run_dir is not None else None, notice=say)
    runner = make_runner(config, log=log)
    for line in notes(config):
        say(line)
    gateway = Gateway(
        temperature=config.llm.sampling.params().temperature,
        limits=Limits(body_bytes=int(config.gateway_body_mb * MIB)),
        responses_remote=config.responses_remote,
    )
    await gateway.start()
    fallback = (config.unmapped, client(config.unmapped)) if config.unmapped else None
    driver = DriverConfig(gateway, runner, fallback, tuple(config.slots or ()))

    def actors_for(resolved: Resolved) -> list[ActorSpec]:
        link = EpisodeLink()
        specs = [
            ActorSpec(slot, functools.partial(GatewaySlot, link), client(impl[1]))
            for slot, impl in resolved.items()
            if impl is not None
        ]
        specs.append(ActorSpec(DRIVER, functools.partial(AgentDriver, driver, link), None))
        return specs

    try:
        with roomy_default_executor(config.concurrency):  # sync agents' threads (threads.py)
            yield actors_for
    finally:
        await runner.aclose()
        await gateway.stop()
        log.close()


__all__ = [
    "SLOT_MODULE",
    "agent_of",
    "check",
    "external_agent",
    "is_external",
    "load_tasks",
    "summary",
    "summary_line",
]
