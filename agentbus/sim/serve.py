"""Run the simulator alone: ``python -m agentbus.sim.serve --port 8000``.

Prints the URL and the serving capacity, serves until Ctrl-C, stops cleanly.
``--profiles FILE.toml`` overrides or adds skill profiles (a table per
profile name); ``--config FILE.toml`` loads a whole :class:`SimConfig`
(flags given on the command line win). Bad input prints one line and exits
with status 2.

The simulator answers well only for tasks its experts know. By default it
loads the tasks ``python -m agentbus.run`` would make with the same
``--tasks`` and ``--seed`` (the built-in generators are deterministic), for
every runnable environment whose expert is loaded, so a run pointed at it
with ``--default 'vllm:URL#weak' --test 'vllm:URL#strong'`` works out of the
box. ``--env NAME`` (repeatable) limits that to the named environments and,
unless ``--experts`` says otherwise, loads only their experts;
``--dataset PATH`` (repeatable, paired with ``--env`` in order) loads a task
file instead of the generator.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import Any, NoReturn

import anyio
from pydantic import ValidationError

from agentbus.core import registry
from agentbus.core.environment import DEFAULT_RUN_TASKS, TaskSource, check_count
from agentbus.core.errors import UserError
from agentbus.core.interrupt import is_interrupt, until_interrupted
from agentbus.core.runnable import is_runnable, require_runnable
from agentbus.sim.config import SimConfig
from agentbus.sim.model import SimModel, load_experts
from agentbus.sim.ratelimit import PRESETS
from agentbus.sim.service import sim_service

#: agentbus.run's defaults, so both commands make the same tasks from the same flags
_RUN_DEFAULTS = {"tasks": DEFAULT_RUN_TASKS, "seed": TaskSource.model_fields["seed"].default}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"agentbus.sim.serve: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m agentbus.sim.serve", description=__doc__.splitlines()[0])
    p.add_argument("--host", default=None, help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default 8000; 0 = free port)")
    p.add_argument("--speed", type=float, default=None, help="time scale (1 real, 0 no delays)")
    p.add_argument("--max-num-seqs", type=int, default=None, help="batch size limit")
    p.add_argument("--profiles", type=Path, default=None, help="TOML file of profile overrides")
    p.add_argument("--config", type=Path, default=None, help="TOML file with a SimConfig")
    p.add_argument(
        "--env",
        action="append",
        default=[],
        help="environment whose tasks to load (repeatable; default: every one with an expert)",
    )
    p.add_argument(
        "--dataset",
        action="append",
        default=[],
        type=Path,
        help="task file of the matching --env, instead of its built-in generator",
    )
    p.add_argument("--knowledge", type=Path, default=None, help="knowledge-point file (math)")
    p.add_argument(
        "--tasks",
        type=int,
        default=None,
        help=f"tasks each generator makes (default {_RUN_DEFAULTS['tasks']}, as agentbus.run)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help=f"seed of the task generators (default {_RUN_DEFAULTS['seed']})",
    )
    p.add_argument("--limit", type=int, default=None, help="keep only the first N tasks")
    p.add_argument(
        "--experts", default=None, help="comma-separated experts to load (default all; '' none)"
    )
    p.add_argument("--rate-429", type=float, default=None, help="fraction answered with 429")
    p.add_argument("--rate-500", type=float, default=None, help="fraction answered with 500")
    p.add_argument("--rate-drop", type=float, default=None, help="fraction of dropped connections")
    p.add_argument(
        "--limits",
        default=None,
        choices=sorted(PRESETS),
        help="provider-style rate limits and latency of a published tier (429/529, headers)",
    )
    return p


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: invalid TOML: {exc}") from None


def build_config(args: argparse.Namespace) -> SimConfig:
    """Merge --config, --profiles and flags (flags win) into a validated SimConfig."""
    data: dict[str, Any] = _toml(args.config) if args.config else {}
    data = dict(data.get("sim", data))
    if args.profiles:
        profiles = _toml(args.profiles)
        data["profiles"] = {**data.get("profiles", {}), **profiles.get("profiles", profiles)}
    data.setdefault("port", 8000)
    for flag, key in (
        ("host", "host"),
        ("port", "port"),
        ("speed", "speed"),
        ("max_num_seqs", "max_num_seqs"),
    ):
        if getattr(args, flag) is not None:
            data[key] = getattr(args, flag)
    if args.experts is not None:
        data["experts"] = [e.strip() for e in args.experts.split(",") if e.strip()]
    faults = dict(data.get("faults", {}))
    for flag in ("rate_429", "rate_500", "rate_drop"):
        if getattr(args, flag) is not None:
            faults[flag] = getattr(args, flag)
    data["faults"] = faults
    if args.limits is not None:
        data["limits"] = {**data.get("limits", {}), "preset": args.limits}
    data["transport"] = "http"
    try:
        return SimConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"config {where}: {first['msg']}") from None


def task_source(
    dataset: Path | None,
    knowledge: Path | None,
    tasks: int | None = None,
    seed: int | None = None,
    limit: int | None = None,
) -> TaskSource:
    """The task source ``python -m agentbus.run`` builds from the same settings."""
    count = _RUN_DEFAULTS["tasks"] if tasks is None else tasks
    check_count(count)
    if limit is not None:
        check_count(limit, "--limit")
    return TaskSource(
        dataset=dataset,
        knowledge=knowledge,
        count=count,
        seed=_RUN_DEFAULTS["seed"] if seed is None else seed,
        limit=limit,
    )


def _default_envs(model: SimModel) -> list[str]:
    """Every runnable environment whose expert the model has, in registry order."""
    with_expert = {expert.env for expert in model.experts}
    return [
        name
        for name in registry.names("environments")
        if name in with_expert and is_runnable(registry.get("environments", name))
    ]


def build_model(
    config: SimConfig,
    envs: list[str],
    datasets: list[Path],
    knowledge: Path | None = None,
    *,
    tasks: int | None = None,
    seed: int | None = None,
    limit: int | None = None,
) -> SimModel:
    """The model with its experts and the tasks they should recognise.

    No ``envs``: the built-in generators of every environment with an
    expert. ``datasets`` empty: the named environments' generators; else one
    dataset per environment, in order.
    """
    if datasets and len(envs) != len(datasets):
        raise UserError("give one --dataset per --env, in the same order")
    for env_name in envs:
        require_runnable(env_name)
    available = registry.names("experts") if config.experts is None else list(config.experts)
    for env_name in envs:
        if env_name not in available:
            why = (
                "which is not installed" if config.experts is None else "which --experts leaves out"
            )
            raise UserError(f"--env {env_name} needs the {env_name!r} expert, {why}")
    # with --env and no --experts, only those environments' experts: the others would
    # know no task, and an unrelated plugin that fails to load cannot stop the server
    names = config.experts if config.experts is not None else (list(envs) or None)
    model = SimModel(config.profiles, load_experts(names), coupled=config.coupled)
    chosen = envs or _default_envs(model)
    sources: list[Path | None] = list(datasets) or [None] * len(chosen)
    for env_name, dataset in zip(chosen, sources, strict=True):
        env_cls = registry.get("environments", env_name)
        try:
            setup = env_cls.setup(task_source(dataset, knowledge, tasks, seed, limit))
        except UserError as exc:
            if envs:  # asked for by name: the user must hear why it cannot be served
                raise
            # serving every environment by default: one that cannot run on this
            # machine (no bubblewrap, no coqc) must not stop the others
            print(f"skipped {env_name}: {exc}", flush=True)
            continue
        model.add_tasks(env_name, setup.tasks)
        origin = str(dataset) if dataset is not None else "the built-in generator"
        print(f"loaded {len(setup.tasks)} {env_name} tasks from {origin}", flush=True)
    return model


async def _serve(config: SimConfig, model: SimModel) -> None:
    async with sim_service(config, model) as sim:
        cap = sim.capacity_tokens_per_s
        print(f"agentbus sim serving at {sim.base_url}", flush=True)
        print(
            f"capacity {cap:.0f} tokens/s at saturation (max_num_seqs={config.max_num_seqs}, "
            f"speed={config.speed:g}); profiles: {', '.join(sim.model.profiles.names())}",
            flush=True,
        )
        print(
            "use it: python -m agentbus.run "
            f"--default 'vllm:{sim.base_url}#weak' --test 'vllm:{sim.base_url}#strong' "
            "(give it the --tasks and --seed this server was started with)",
            flush=True,
        )
        if sim.engine.limiter is not None:
            print(f"provider limits: {sim.engine.limiter.describe()}", flush=True)
        await anyio.sleep_forever()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = build_config(args)
        model = build_model(
            config,
            args.env,
            args.dataset,
            args.knowledge,
            tasks=args.tasks,
            seed=args.seed,
            limit=args.limit,
        )
        done = anyio.run(until_interrupted, lambda: _serve(config, model))
        if done.interrupted:
            print("stopped", flush=True)
    except UserError as exc:
        print(f"agentbus.sim.serve: error: {exc}", file=sys.stderr)
        return 2
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        # a second Ctrl-C, or one before the handler was in place
        print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
