"""``python -m agentbus.discover``: which modules does my agent have?

Runs the agent on a few tasks with every module on one model (the default,
``sim:weak`` unless ``--model`` says otherwise; no slot is mapped yet, so
every name the agent sends as ``model`` goes to that model), prints each
module name with its calls, tokens and latency, and writes a config skeleton
whose ``slots`` are those names, ready for ``python -m agentbus.run --config``.
Each task's line says what the agent answered and how the run's scorer scores
it, so a crashing agent or an answer the scorer cannot read shows before a
run of thousands of episodes; when no task gave a result, it exits 1 and
writes no config.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agentbus.app import external, inspect_run
from agentbus.app.cli_args import OneLineParser
from agentbus.app.config import RunConfig, build_config
from agentbus.app.run import exit_status
from agentbus.core.environment import check_count
from agentbus.core.errors import InfraError, UserError
from agentbus.core.logs import configure
from agentbus.gateway.runners import AgentFailed
from agentbus.gateway.scorers import load_scorer, verdict
from agentbus.gateway.server import Gateway
from agentbus.gateway.session import ModuleStats, Session
from agentbus.gateway.tasks import expected, payload
from agentbus.llm.router import LLMRouter
from agentbus.sim.service import sim_service


def parser() -> OneLineParser:
    p = OneLineParser(
        prog="python -m agentbus.discover",
        description="Run your agent on a few tasks and list the module names it uses "
        "(with calls, tokens and latency each); write a config skeleton mapping them to slots.",
    )
    a = p.add_argument
    a("--agent", help="your async function, MODULE:FUNC")
    a("--agent-cmd", metavar="CMD", help="your agent as a command")
    a("--agent-url", metavar="URL", help="your agent as an HTTP service")
    a("--inspect", metavar="FILE@TASK", help="an Inspect AI task: lists the roles it calls")
    a("--dataset", type=Path, help="tasks, one JSON object a line with an id")
    a("--env", help="a built-in environment's tasks instead (math)")
    a("--tasks", type=int, default=3, help="how many tasks to run (default 3)")
    a("--model", default="sim:weak", help="the model every module gets (default sim:weak)")
    a("--out", type=Path, default=Path("agentbus-agent.toml"), help="config skeleton to write")
    a("--agent-timeout", type=float, default=300.0, help="seconds per agent run")
    a("--sim-speed", type=float, help="simulator speed factor (0 = no delays; default 6)")
    a("--scorer", help="how answers are scored (exact, contains, numeric, regex, MODULE:FUNC)")
    return p


@dataclass
class Discovery:
    """Per-module totals over the tasks run, and what went wrong."""

    modules: dict[str, ModuleStats] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    tasks: int = 0
    failures: list[str] = field(default_factory=list)
    #: one line per task: its id, the agent's answer and the scorer's verdict
    results: list[str] = field(default_factory=list)
    #: tasks whose agent run gave a result
    answered: int = 0

    def add(self, session: Session) -> None:
        for name, stats in session.modules.items():
            total = self.modules.get(name)
            if total is None:
                total = self.modules[name] = ModuleStats()
                self.order.append(name)
            total.calls += stats.calls
            total.prompt_tokens += stats.prompt_tokens
            total.completion_tokens += stats.completion_tokens
            total.latency_s += stats.latency_s


def config_of(ns: argparse.Namespace) -> RunConfig:
    data: dict[str, Any] = {"default": ns.model, "agent_timeout_s": ns.agent_timeout}
    if ns.sim_speed is not None:
        data["sim"] = {"speed": ns.sim_speed}
    for key in ("agent", "agent_cmd", "agent_url", "inspect", "dataset", "env", "scorer"):
        if getattr(ns, key) is not None:
            data[key] = getattr(ns, key)
    config = build_config(data)
    if not external.is_external(config):
        raise UserError("name your agent: --agent MODULE:FUNC, --agent-cmd CMD or --agent-url URL")
    if ns.env is None:
        config = config.model_copy(update={"env": external.ENV})
    if config.env == external.ENV and config.dataset is None and config.inspect is None:
        raise UserError("give tasks: --dataset FILE.jsonl (or --env math)")
    check_count(ns.tasks)
    return config


async def discover(config: RunConfig, count: int) -> Discovery:
    setup = external.load_tasks(config)
    tasks = setup.tasks[:count]
    runner = external.make_runner(config)
    scorer = load_scorer(config.scorer) if config.scorer is not None else None
    if config.inspect is not None:  # the task's own scorer decided, in the runner
        scorer = inspect_run.inspect_verdict
    found = Discovery()
    async with sim_service(config.sim.model_copy(update={"experts": []})) as sim:
        sim.model.add_tasks(config.env, tasks)
        async with LLMRouter(config.llm, sim=sim) as router:
            gateway = Gateway(temperature=config.llm.sampling.params().temperature)
            await gateway.start()
            try:
                client = router.client(config.default)
                for task in tasks:
                    session = Session(
                        episode_id=f"discover|{task.id}",
                        task_id=task.id,
                        slots={},
                        off=frozenset(),
                        fallback=(config.default, client),
                    )
                    ctx = gateway.open(session)
                    try:
                        result = await runner.run(payload(task), ctx)
                    except AgentFailed as exc:
                        found.failures.append(f"{task.id}: {exc}")
                        found.results.append(f"{task.id}: no result (the agent failed)")
                    else:
                        found.answered += 1
                        found.results.append(result_line(task.id, result, expected(task), scorer))
                    finally:
                        gateway.close(session)
                    if session.infra_error:
                        raise InfraError(session.infra_error)
                    found.add(session)
                    found.tasks += 1
            finally:
                await runner.aclose()
                await gateway.stop()
    return found


def result_line(task_id: str, result: dict[str, Any], task: dict[str, Any], scorer: Any) -> str:
    """``ID: answer 'A' (expected 'E'): right, reward 1.00`` for one task."""
    reward, success, how = verdict(result, task, scorer)
    answer = result.get("answer", result)
    line = f"{task_id}: answer {str(answer)[:60]!r}"
    if "answer" in task:
        line += f" (expected {str(task['answer'])[:60]!r})"
    state = "right" if success else ("partly right" if reward else "wrong")
    if how.startswith("scorer failed"):
        state = how
    return f"{line}: {state}, reward {reward:.2f}"


def skeleton(config: RunConfig, modules: Sequence[str]) -> str:
    """A run config for the agent: its modules as slots, default and test models."""
    lines = [
        "# written by python -m agentbus.discover; edit the models, then:",
        "#   python -m agentbus.run --config THIS_FILE",
    ]
    if config.inspect is not None:
        lines.append(f"inspect = {_toml(config.inspect)}")
    elif config.agent_cmd is not None:
        lines.append(f"agent_cmd = {_toml(config.agent_cmd)}")
    elif config.agent_url is not None:
        lines.append(f"agent_url = {_toml(config.agent_url)}")
    else:
        lines.append(f"agent = {_toml(config.agent)}")
    if config.env != external.ENV:
        lines.append(f"env = {_toml(config.env)}")
    if config.dataset is not None:
        lines.append(f"dataset = {_toml(str(config.dataset))}")
    lines.append("slots = [" + ", ".join(_toml(m) for m in modules) + "]")
    lines.append(f"default = {_toml(config.default)}")
    lines.append('test = ["sim:strong"]')
    if config.inspect is None:  # an Inspect task is scored by its own scorer
        lines.append(f"scorer = {_toml(config.scorer or 'exact')}")
    return "\n".join(lines) + "\n"


def _toml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def report(found: Discovery, model: str) -> str:
    head = f"{'module':<20} {'calls':>7} {'prompt tok':>11} {'output tok':>11} {'mean latency':>13}"
    rows = [f"ran {found.tasks} task(s) with every module on {model}", head]
    for name in found.order:
        s = found.modules[name]
        mean = s.latency_s / s.calls if s.calls else 0.0
        rows.append(
            f"{name:<20} {s.calls:>7} {s.prompt_tokens:>11} {s.completion_tokens:>11} "
            f"{mean * 1000:>10.1f} ms"
        )
    rows.extend(found.results)
    for failure in found.failures:
        rows.append(f"agent failed on {failure}")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    configure(os.environ.get("AGENTBUS_LOG_LEVEL", "warning"))
    ns = parser().parse_args(argv)
    try:
        config = config_of(ns)
        started = time.perf_counter()
        found = anyio.run(discover, config, ns.tasks)
    except (UserError, InfraError) as exc:
        return exit_status(exc)
    print(report(found, config.default))
    if not found.answered:
        print(
            f"no task gave a result ({len(found.failures)} agent failure(s)): fix the agent "
            "before a run (the lines above say why); no config written"
        )
        return 1
    if not found.order:
        print(
            "the agent made no model calls through the gateway: does it read "
            "OPENAI_BASE_URL / OPENAI_API_KEY (or ctx.base_url / ctx.api_key)?"
        )
        return 1
    if ns.out.exists():
        print(f"{ns.out} exists; not overwritten. Slots: {','.join(found.order)}")
    else:
        ns.out.write_text(skeleton(config, found.order))
        print(f"wrote {ns.out} (slots: {', '.join(found.order)}); run it with:")
        print(f"  python -m agentbus.run --config {ns.out}")
    print(f"({time.perf_counter() - started:.1f}s)")
    return 0


__all__ = ["discover", "main", "skeleton"]
