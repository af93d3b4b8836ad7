"""``python -m agentbus.blame RUN_DIR``: which call decided each failure of a run.

By default it blames every failed episode of the all-default agent, repairing
one call at a time with the run's (first) test model. ``--coalition`` picks
another coalition's episodes, ``--sample N`` a seeded sample of them,
``--successes`` asks instead which call broke a success (repaired by the
default model), ``--repair MODEL`` names another repair model. Verdicts are
appended to ``RUN_DIR/blame.jsonl`` as they come, so running the command
again resumes; the summary goes to ``blame.json`` and ``blame.md``.

Before replaying anything it reproduces a few episodes: an agent (or
environment) that does not act the same on identical answers cannot be
blamed by replay, and the command says so in one line (exit status 2).
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
    CHECK_EPISODES,
    LOG,
    BlameOptions,
    blame_all,
    choose,
    done_verdicts,
    load_config,
    load_records,
    open_blamer,
    repair_model,
)
from agentbus.app.blame_report import markdown, summarise, table_lines
from agentbus.app.cli_args import OneLineParser
from agentbus.app.run import exit_status
from agentbus.errors import InfraError, UserError
from agentbus.logs import configure
from agentbus.pipes import pipe_safe
from agentbus.runs.store import atomic_write


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
        "--confirm",
        type=int,
        default=0,
        help="independent repair answers that must repeat a flip before it counts (default 0: "
        "the first flip counts)",
    )
    p.add_argument(
        "--placebo",
        type=int,
        default=4,
        help="resampled answers of the slot's own model a flip is tested against: it counts "
        "only if fewer than half of them flip the outcome too (default 4; 0: the first flip)",
    )
    p.add_argument("--concurrency", type=int, default=16, help="episodes replayed at once")
    ns = p.parse_args(list(argv) if argv is not None else None)
    if ns.sample is not None and ns.sample < 1:
        p.error("--sample must be at least 1")
    if ns.confirm < 0 or ns.placebo < 0:
        p.error("--confirm and --placebo must be 0 or more")
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
        confirm=ns.confirm,
        placebo=ns.placebo,
    )


async def blame(options: BlameOptions, out: Any = sys.stdout) -> dict[str, Any]:
    """Run the whole command; returns the summary (also written to the run directory)."""
    run_dir = options.run_dir
    config = load_config(run_dir)
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
    done = done_verdicts(run_dir, repair, options.confirm, options.placebo)
    todo = [r for r in chosen if r.episode_id not in done]
    what = "successes" if options.outcome == "success" else "failures"
    print(
        f"blaming {len(chosen)} {what} of coalition "
        f"{'+'.join(options.coalition) or '(all default)'}, repaired by {repair}"
        + (f"; {len(chosen) - len(todo)} already in {LOG}" if len(todo) < len(chosen) else ""),
        file=out,
        flush=True,
    )
    async with open_blamer(
        config, run_dir, repair, confirm=options.confirm, placebo=options.placebo
    ) as blamer:
        slots = list(blamer.factory.plan.agent.slots)  # a decisive call can be any slot's
        for record in todo[:CHECK_EPISODES]:
            check = await blamer.reproduce(record)
            if not check.replayable:
                raise UserError(
                    f"not replayable: {record.episode_id} did not reproduce ({check.diverged}); "
                    "the agent or the environment is not deterministic given identical "
                    "answers, or its code changed since the run"
                )
        entries = await blame_all(blamer, todo, run_dir / LOG, options.concurrency)
    wanted = {r.episode_id for r in chosen}
    every = [e for e in done.values() if e["episode_id"] in wanted] + entries
    summary = summarise(every, slots)
    summary.update(
        repair=repair,
        coalition=list(options.coalition),
        outcome=options.outcome,
        confirm=options.confirm,
        placebo=options.placebo,
    )
    command = "python -m agentbus.blame " + shlex.join(sys.argv[1:] or [str(run_dir)])
    atomic_write(run_dir / "blame.json", orjson.dumps(summary, option=orjson.OPT_INDENT_2))
    atomic_write(run_dir / "blame.md", markdown(summary, repair, command).encode())
    for line in table_lines(summary):
        print(line, file=out)
    print(f"written: {run_dir / 'blame.md'}, blame.json, {LOG}", file=out)
    return summary


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    configure(os.environ.get("AGENTBUS_LOG_LEVEL", "warning"))
    started = time.perf_counter()
    try:
        options = parse(argv)
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
