"""``python -m agentbus.blame RUN_DIR``: which call decided each failure of a run.

By default it blames every failed episode of the all-default agent, repairing
one call at a time with the run's (first) test model. ``--coalition`` picks
another coalition's episodes, ``--sample N`` a seeded sample of them,
``--successes`` asks instead which call broke a success (repaired by the
default model), ``--repair MODEL`` names another repair model. Verdicts are
appended to ``RUN_DIR/blame.jsonl`` as they come, so running the command
again resumes; the summary goes to ``blame.json`` and ``blame.md``, one
section per blame setting (who, repair model, success bar, decision rule), so
a second setting does not overwrite the first. ``--details`` prints every
episode's verdict (task, coalition, call, what was said and what the repair
said), which blame.md and blame.json always hold.

Before replaying anything it reproduces every chosen episode: an agent (or
environment) that does not act the same on identical answers cannot be
blamed by replay, and the command lists the episodes that differ and refuses
in one line (exit status 2). A run without its LLM cache is refused as such.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import orjson

from agentbus.app.blame import (
    LOG,
    BlameOptions,
    Blamer,
    blame_all,
    check_cache,
    choose,
    done_verdicts,
    load_config,
    load_records,
    open_blamer,
    repair_model,
)
from agentbus.app.blame_report import detail_lines, save, summarise, table_lines
from agentbus.app.cli_args import OneLineParser
from agentbus.app.external import replay_config
from agentbus.app.run import exit_status
from agentbus.core.coalitions import coalition_label
from agentbus.core.errors import InfraError, UserError
from agentbus.core.logs import configure
from agentbus.core.record import EpisodeRecord
from agentbus.gateway.runners import command_argv
from agentbus.replay.search import ALPHA, PLACEBOS, REPAIRS
from agentbus.runs.pipes import pipe_safe


def parse(argv: Sequence[str] | None) -> BlameOptions:
    p = OneLineParser(
        prog="python -m agentbus.blame",
        description="Find the decisive call of each failed episode of a finished run by "
        "counterfactual replay, and the share of failures each module decides.",
    )
    p.add_argument("run_dir", type=Path, help="a finished run's directory")
    p.add_argument(
        "--coalition",
        help="comma-separated slots on the test model, or none (default: none for failures, "
        "every varied slot for --successes)",
    )
    p.add_argument("--sample", type=int, help="blame a seeded sample of N episodes")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample")
    p.add_argument(
        "--successes",
        action="store_true",
        help="blame successes instead (what broke them; repaired by the default model)",
    )
    p.add_argument("--repair", help="model spec that answers the repaired call")
    p.add_argument(
        "--repairs",
        type=int,
        default=REPAIRS,
        help=f"repaired continuations per tested call (default {REPAIRS})",
    )
    p.add_argument(
        "--placebos",
        type=int,
        default=PLACEBOS,
        help=f"continuations keeping the call's recorded answer, per tested call (default "
        f"{PLACEBOS}; 0: the first flip counts, no test)",
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=ALPHA,
        help=f"level of the one-sided Fisher test, repaired vs placebo flips (default {ALPHA})",
    )
    p.add_argument(
        "--threshold",
        type=float,
        help="an episode passes when its reward is at least this (default: its success flag)",
    )
    p.add_argument("--details", action="store_true", help="print every episode's verdict")
    p.add_argument("--concurrency", type=int, default=16, help="episodes replayed at once")
    p.add_argument("--agent-isolation", choices=("sandbox", "none"), help="replay the agent so")
    p.add_argument("--agent-path", action="append", type=Path, default=[], help="as for run")
    p.add_argument(
        "--agent-worker",
        metavar="CMD",
        help="replay a command agent through long-lived workers running CMD (the same agent "
        "in worker form, docs/your-agent.md), under the run's sandbox: a process per replay "
        "is slow; every episode is still reproduced first",
    )
    ns = p.parse_args(list(argv) if argv is not None else None)
    if ns.sample is not None and ns.sample < 1:
        p.error("--sample must be at least 1")
    if ns.repairs < 1 or ns.placebos < 0:
        p.error("--repairs must be at least 1 and --placebos 0 or more")
    if not 0.0 < ns.alpha < 1.0:
        p.error("--alpha must be between 0 and 1")
    if ns.concurrency < 1:
        p.error("--concurrency must be at least 1")
    coalition = (
        None
        if ns.coalition is None
        else tuple(s.strip() for s in ns.coalition.split(",") if s.strip() and s != "none")
    )
    return BlameOptions(
        run_dir=ns.run_dir,
        coalition=coalition,
        outcome="success" if ns.successes else "failure",
        sample=ns.sample,
        repair=ns.repair,
        concurrency=ns.concurrency,
        seed=ns.seed,
        agent_isolation=ns.agent_isolation,
        agent_paths=tuple(ns.agent_path),
        agent_worker=ns.agent_worker,
        repairs=ns.repairs,
        placebos=ns.placebos,
        alpha=ns.alpha,
        threshold=ns.threshold,
        details=ns.details,
    )


def run_folder(run_dir: Path) -> Path | None:
    """The folder the run was started in, as its manifest records it (None: not recorded)."""
    try:
        manifest = orjson.loads((run_dir / "manifest.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    cwd = manifest.get("cwd") if isinstance(manifest, dict) else None
    return Path(cwd) if isinstance(cwd, str) and cwd else None


def check_folder(agent_cmd: str | None, made: Path | None) -> None:
    """A command agent's relative paths must resolve as in the run: a one-line refusal if not.

    ``made`` is the run's folder (:func:`run_folder`). Run elsewhere, a relative
    ``--agent-cmd`` starts another file or none, every replay fails at its
    first call, and the episodes would look like a nondeterministic agent.
    """
    if agent_cmd is None:
        return
    here = Path.cwd().resolve()
    if made is not None:
        if made.resolve() != here:
            raise UserError(
                f"the run was made in {made} and its --agent-cmd {agent_cmd!r} resolves there: "
                "blame it from that folder" + ("" if made.is_dir() else " (it no longer exists)")
            )
        return
    relative = [w for w in command_argv(agent_cmd) if "/" in w and not w.startswith("/")]
    missing = [w for w in relative if not (here / w).exists()]
    if missing:
        raise UserError(
            f"the run's --agent-cmd {agent_cmd!r} names {missing[0]} relative to the folder "
            f"the run was made in, which its manifest does not record, and {here} has no "
            f"{missing[0]}: blame it from that folder"
        )


def enter_run_folder(options: BlameOptions, out: Any) -> BlameOptions:
    """Replay from the folder the run was made in, so relative paths resolve as they did.

    The command line's own paths (run directory, ``--agent-path``) are made
    absolute first. A folder that no longer exists is left alone (a command
    agent is then refused by :func:`check_folder`).
    """
    made = run_folder(options.run_dir)
    if made is None or not made.is_dir() or made.resolve() == Path.cwd().resolve():
        return options
    options = replace(
        options,
        run_dir=options.run_dir.resolve(),
        agent_paths=tuple(p.resolve() for p in options.agent_paths),
    )
    os.chdir(made)
    print(f"replaying from {made}, the folder the run was made in", file=out)
    return options


async def _check(blamer: Blamer, todo: Sequence[EpisodeRecord], out: Any) -> None:
    """Reproduce every chosen episode before any replay; refuse (one line) if one differs.

    Every episode, not a few: an agent whose final answer is random reproduces
    its prompts but not always its outcome, and a sample of three can miss it.
    The episodes that differ are listed, each with its first difference.
    """
    limiter = anyio.CapacityLimiter(max(1, blamer.options.concurrency))
    problems: dict[str, str] = {}

    async def one(record: EpisodeRecord) -> None:
        async with limiter:
            why = await blamer.reproduce(record)
        if why is not None:
            problems[record.episode_id] = why

    async with anyio.create_task_group() as tg:
        for record in todo:
            tg.start_soon(one, record)
    if not problems:
        return
    for eid in sorted(problems):
        print(f"not replayable: {eid}: {problems[eid]}", file=out)
    first = sorted(problems)[0]
    raise UserError(
        f"not replayable: {len(problems)} of {len(todo)} episodes did not reproduce (first: "
        f"{first}: {problems[first]}); the agent or the environment is not deterministic "
        "given identical answers, or its code changed since the run"
    )


async def blame(options: BlameOptions, out: Any = None) -> dict[str, Any]:
    """Run the whole command; returns the summary (also written to the run directory)."""
    out = sys.stdout if out is None else out
    run_dir = options.run_dir
    config = replay_config(  # never a looser sandbox than the defaults from a file
        load_config(run_dir), options.agent_isolation == "none", options.agent_paths
    )
    check_folder(config.agent_cmd, run_folder(run_dir))
    if options.agent_worker is not None:
        if config.agent_cmd is None:
            raise UserError("--agent-worker replays a command agent; this run has none")
        config = config.model_copy(
            update={"agent_cmd": options.agent_worker, "agent_workers": True}
        )
    records = await anyio.to_thread.run_sync(load_records, run_dir)
    varied = list(dict.fromkeys(s for r in records for s in r.slots))
    if options.coalition is None:  # a success of the all-test agent, or a failure of the default
        options = replace(options, coalition=tuple(varied) if options.outcome == "success" else ())
    assert options.coalition is not None
    unknown = set(options.coalition) - set(varied)
    if unknown:
        raise UserError(f"--coalition names unknown slots: {', '.join(sorted(unknown))}")
    chosen = choose(records, config, options)
    repair = repair_model(config, options)
    check_cache(config, run_dir)
    setting = options.setting(repair)
    done = done_verdicts(run_dir, setting)
    todo = [r for r in chosen if r.episode_id not in done]
    what = "successes" if options.outcome == "success" else "failures"
    print(
        f"blaming {len(chosen)} {what} of coalition "
        f"{coalition_label('+'.join(options.coalition))}, repaired by {repair}"
        + (f"; {len(chosen) - len(todo)} already in {LOG}" if len(todo) < len(chosen) else ""),
        file=out,
        flush=True,
    )
    async with open_blamer(config, run_dir, repair, options) as blamer:
        slots = list(blamer.factory.plan.agent.slots)  # a decisive call can be any slot's
        await _check(blamer, todo, out)
        entries = await blame_all(blamer, todo, run_dir / LOG, options.concurrency)
    wanted = {r.episode_id for r in chosen}
    every = [e for e in done.values() if e["episode_id"] in wanted] + entries
    summary = summarise(every, slots)
    summary.update(
        setting=setting,
        repair=repair,
        coalition=list(options.coalition),
        outcome=options.outcome,
        repairs=options.repairs,
        placebos=options.placebos,
        placebo=options.placebo,
        alpha=options.alpha,
        threshold=options.threshold,
        command="python -m agentbus.blame " + shlex.join(sys.argv[1:] or [str(run_dir)]),
    )
    kept = save(run_dir, summary)
    for line in table_lines(summary):
        print(line, file=out)
    if options.details:
        for line in detail_lines(summary):
            print(line, file=out)
    print(
        f"written: {run_dir / 'blame.md'}, blame.json ({kept} blame settings kept), {LOG}",
        file=out,
    )
    return summary


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    configure(os.environ.get("AGENTBUS_LOG_LEVEL", "warning"))
    started = time.perf_counter()
    try:
        options = enter_run_folder(parse(argv), sys.stdout)
        anyio.run(blame, options)
    except (UserError, InfraError, BaseExceptionGroup) as exc:
        # a task group wraps what one episode's replay raised
        return exit_status(exc, "agentbus.blame")
    except KeyboardInterrupt:
        print(f"\nagentbus.blame: interrupted; verdicts so far are in {LOG}", file=sys.stderr)
        return 130
    print(f"took {time.perf_counter() - started:.0f} s")
    return 0


__all__ = ["blame", "main", "parse"]
