"""Composing a run of an Inspect AI task (``--inspect path/task.py@name``).

The kernel's :mod:`agentbus.gateway.inspect_task` loads the task and runs a
sample per episode; this layer checks the run config against the task (one
line for each thing that cannot run), hands the samples to the external
agent's environment with Inspect's scorer as the run's scorer, and builds the
runner. Everything else (gateway, plan, router, store, attribution) is the
path every gateway agent takes (:mod:`agentbus.app.external`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from agentbus.core.environment import EnvSetup
from agentbus.core.errors import UserError
from agentbus.core.record import EpisodeRecord
from agentbus.gateway import inspect_task
from agentbus.gateway.environment import ExternalEnvironment
from agentbus.gateway.tasks import ENV

if TYPE_CHECKING:
    from agentbus.app.config import RunConfig


def loaded(config: RunConfig) -> inspect_task.LoadedTask:
    """The run's task, loaded once per process (the check, the tasks, the runner)."""
    assert config.inspect is not None
    return _load(config.inspect, orjson.dumps(config.inspect_args, option=orjson.OPT_SORT_KEYS))


@functools.lru_cache(maxsize=4)
def _load(spec: str, args: bytes) -> inspect_task.LoadedTask:
    return inspect_task.load(spec, orjson.loads(args))


def check(config: RunConfig) -> None:
    """Refuse what an Inspect run cannot do, each in one line."""
    assert config.inspect is not None
    inspect_task.require_inspect()
    if config.scorer is not None:
        raise UserError("--scorer: an Inspect task is scored by its own scorer; drop --scorer")
    if config.env != ENV:
        raise UserError("--env: an Inspect task brings its own samples; drop --env")
    if config.dataset is not None:
        raise UserError("--dataset: an Inspect task brings its own samples; drop --dataset")
    task = loaded(config)
    problems = inspect_task.refusals(task, config.repeats)
    if problems:
        raise UserError(problems[0])


def inspect_verdict(result: Mapping[str, Any], task: Mapping[str, Any]) -> dict[str, Any]:
    """The run's scorer: the reward Inspect's scorer gave the sample (computed in agentbus)."""
    scored = result.get("inspect") or {}
    return {"reward": float(scored.get("reward", 0.0)), "success": bool(scored.get("success"))}


def load_tasks(config: RunConfig) -> EnvSetup:
    """The samples as tasks, scored by Inspect's scorer (``--limit`` takes the first N)."""
    assert config.inspect is not None
    tasks = inspect_task.tasks_of(loaded(config))
    if config.limit is not None:
        tasks = tasks[: config.limit]
    return EnvSetup(tasks, functools.partial(ExternalEnvironment, inspect_verdict))


def make_runner(config: RunConfig) -> inspect_task.InspectAgent:
    assert config.inspect is not None
    return inspect_task.InspectAgent(
        loaded(config),
        slots=tuple(config.slots or ()),
        time_limit_s=config.agent_timeout_s,
        keep_sample=config.inspect_log is not None,
    )


def describe(config: RunConfig) -> str | None:
    """``inspect task NAME (version V, FILE)`` for the results table, or None."""
    if config.inspect is None:
        return None
    task = loaded(config)
    return f"Inspect task {task.name}, version {task.version}"


def finish(config: RunConfig, results: dict[str, Any], records: Iterable[EpisodeRecord]) -> None:
    """After the run: name the task in the results and write ``--inspect-log``'s logs."""
    label = describe(config)
    if label is None:
        return
    results["workload"] = label
    if config.inspect_log is not None:
        from agentbus.app.inspect_logs import write_logs

        paths = write_logs(loaded(config), records, config.inspect_log)
        results["inspect_logs"] = [str(p) for p in paths]


__all__ = ["check", "describe", "finish", "inspect_verdict", "load_tasks", "loaded", "make_runner"]
