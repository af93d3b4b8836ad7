"""``--stop mvp`` and ``--stop ranking`` end to end, against the truth tables.

Why. The stopping rules are checked on replays (benchmarks/stop_coverage.py,
tests/attribution/test_stop_rules.py), which reuse the rule and interval code
but not the live path: the adaptive scheduler, block admission, the service's
estimates, results.json and the headline. This script runs the real command,
``python -m agentbus.run --env ENV --stop RULE --tasks T --seed S --sim-speed 0``,
for many seeds and compares each run with the simulator's truth table
(``python -m agentbus.truth show --env ENV``): did it stop, after how many
episodes, is the slot (or order) it names the true one, does each interval
shown at the stop hold the true Shapley value, does the headline in results.md
agree with the stop, and did it end with (coalition, task) pairs left unrun
(the stranding the scheduler used to show).

Each run is the in-process entry point of the command
(:func:`agentbus.app.run.main` with the same argv) in a worker process that
runs one seed after another, so the ~3 s of imports are paid once per worker;
``--fresh`` starts ``python -m agentbus.run`` per run instead (the same
records: the ``table`` field is a digest of the Shapley table to 9
decimals). The simulator is served in process (``--sim-transport
inprocess``, about 1.5x less CPU than HTTP); over HTTP the stop is decided
at the same task count on the same data, but more blocks are in flight
when it comes and the run ends on more episodes (ticket seed 500000: the
decision on 22 tasks both ways, 384 episodes in the end in process, 464
over HTTP). ``--transport http`` runs that way.
Runs go round-robin over the cells so that an interrupted or deadline-cut
measurement has about as many runs in each. Every finished run is one JSON
line in ``--out``; a rerun with the same ``--out`` skips what is there.

    python benchmarks/stop_end_to_end.py --runs 150 --tasks 30 --jobs 2
    python benchmarks/stop_end_to_end.py --report     # the table of /tmp/stop_e2e/records.jsonl
    python benchmarks/stop_end_to_end.py --envs ticket --rules mvp --runs 1 --seed0 1058 \\
        --tasks 200                                 # the run an audit saw strand itself

CPU: about 15 ms per episode in process (ticket and math), a run of 30 tasks
at most 480 episodes; each record carries its CPU seconds (the process and
its waited children: math's checker pool).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from attribution.replicate import wilson

ENVS = ("ticket", "math", "navigation")
RULES = ("mvp", "ranking")
DEFAULT, TEST = "sim:weak", "sim:strong"
#: seeds of these runs: apart from the truth tables' (1,000,000 on)
SEED0 = 500_000
PAIRS_LEFT = re.compile(r"\(([\d,]+) of ([\d,]+) \(coalition, task\) pairs run, ([\d,]+) left\)")


def truth(env: str) -> dict[str, Any]:
    """The true Shapley values, MVP and order of ``env`` (the stored truth table)."""
    from agentbus.app.truth import true_values
    from agentbus.sim.truth import table

    tv = true_values(table.load(env, DEFAULT, TEST))
    slots = list(tv["slots"])
    phi = {s: float(v) for s, v in zip(slots, tv["shapley"], strict=True)}
    order = sorted(slots, key=lambda s: -phi[s])
    return {"phi": phi, "mvp": order[0], "order": order}


def argv(env: str, rule: str, tasks: int, seed: int, run_dir: Path, transport: str) -> list[str]:
    """The command line of one run (after ``python -m agentbus.run``)."""
    return [
        *("--env", env, "--stop", rule, "--tasks", str(tasks), "--seed", str(seed)),
        *("--default", DEFAULT, "--test", TEST, "--sim-speed", "0", "--sim-transport", transport),
        *("--no-plots", "--no-trace", "--progress", "off", "--run-dir", str(run_dir)),
    ]


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _in_process(args: list[str], log: Path) -> int:
    """``agentbus.app.run.main(args)`` with fds 1 and 2 sent to ``log``."""
    from agentbus.app.run import main

    saved = [os.dup(1), os.dup(2)]
    sys.stdout.flush()
    sys.stderr.flush()
    with log.open("wb") as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
    try:
        return main(args)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, keep in zip((1, 2), saved, strict=True):
            os.dup2(keep, fd)
            os.close(keep)


def judge(
    results: dict[str, Any], headline: str, rule: str, true: dict[str, Any]
) -> dict[str, Any]:
    """What one finished run says, and whether it is right (see the module docstring)."""
    model = results["models"][TEST]
    shap = model["shapley"]
    adaptive = results.get("adaptive") or {}
    stopped = bool(adaptive.get("done"))
    order = sorted(shap, key=lambda s: -shap[s]["value"])
    named = order[0] if stopped else None
    shown = {s: shap[s]["ci_low"] <= true["phi"][s] <= shap[s]["ci_high"] for s in shap}
    fixed = {
        s: shap[s].get("fixed_low", shap[s]["ci_low"])
        <= true["phi"][s]
        <= shap[s].get("fixed_high", shap[s]["ci_high"])
        for s in shap
    }
    said = re.match(r"\*\*MVP(?: not identified)?:? (\w+)", headline)
    says_mvp = None if said is None or "not identified" in headline else said.group(1)
    reason = str(adaptive.get("stop_reason", ""))
    left = PAIRS_LEFT.search(reason)
    # to 9 decimals: episodes arrive in another order on another run, and sums differ in the
    # last bits (1e-16) although every reward is the same
    rounded = {s: {k: round(v, 9) for k, v in shap[s].items()} for s in sorted(shap)}
    digest = json.dumps(rounded, sort_keys=True).encode()
    return {
        "stopped": stopped,
        "episodes": int(model["episodes"]),
        "interval": results.get("interval", "fixed-sample"),
        "named": named,
        "named_order": order if stopped and rule == "ranking" else None,
        "mvp_right": None if named is None else named == true["mvp"],
        "order_right": None if rule != "ranking" or not stopped else order == true["order"],
        "shown_covers": shown,
        "fixed_covers": fixed,
        "headline_mvp": says_mvp,
        # a stop names the top slot (both rules identify it); no stop names none
        "headline_agrees": says_mvp == named,
        "stop_reason": reason,
        "pairs_left": int(left.group(3).replace(",", "")) if left else None,
        "table": hashlib.sha256(digest).hexdigest()[:16],
    }


def at_stop(events: Path, true: dict[str, Any]) -> dict[str, Any]:
    """The first snapshot that says the rule is met: tasks and episodes it stood on, coverage.

    The run goes on to finish the blocks in flight, so results.json stands
    on more episodes than the stop decision did (how many more depends on
    timing); the decision itself is on admitted task blocks only.
    """
    with events.open("rb") as f:
        for line in f:
            if b'"attribution.snapshot"' not in line:
                continue
            snap = json.loads(line)
            if not snap.get("done"):
                continue
            shap = snap["models"][TEST]["shapley"]
            return {
                "stop_tasks": snap.get("admitted_tasks"),
                "stop_episodes": snap.get("episodes"),
                "stop_covers": {
                    s: shap[s]["ci_low"] <= true["phi"][s] <= shap[s]["ci_high"] for s in shap
                },
            }
    return {}


def one(job: dict[str, Any]) -> dict[str, Any]:
    """Run one seed of one cell and judge it (a worker's job)."""
    if job["deadline"] and time.time() > job["deadline"]:
        return {**job, "skipped": "deadline"}
    run_dir = Path(job["root"]) / f"{job['env']}-{job['rule']}-{job['seed']}"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    args = argv(job["env"], job["rule"], job["tasks"], job["seed"], run_dir, job["transport"])
    log = run_dir.with_suffix(".log")
    cpu, wall = _cpu(), time.perf_counter()
    if job["fresh"]:
        with log.open("wb") as f:
            rc = subprocess.call([sys.executable, "-m", "agentbus.run", *args], stdout=f, stderr=f)
    else:
        rc = _in_process(args, log)
    record = {k: job[k] for k in ("env", "rule", "tasks", "seed", "transport", "fresh")}
    record.update(rc=rc, cpu_s=round(_cpu() - cpu, 2), wall_s=round(time.perf_counter() - wall, 1))
    try:
        results = json.loads((run_dir / "results.json").read_text())
        md = (run_dir / "results.md").read_text().splitlines()
        headline = next((line for line in md if line.startswith("**MVP")), "")
        true = truth(job["env"])
        record.update(judge(results, headline, job["rule"], true))
        record.update(at_stop(run_dir / "events.jsonl", true))
    except (OSError, ValueError, KeyError) as exc:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
        record["error"] = f"{type(exc).__name__}: {exc}; {' '.join(tail)}"[:300]
    if not job["keep"]:
        shutil.rmtree(run_dir, ignore_errors=True)
        log.unlink(missing_ok=True)
    return record


def jobs(args: argparse.Namespace, done: set[tuple[str, str, int]]) -> Iterator[dict[str, Any]]:
    """The runs still to do, round-robin over the cells (seed by seed)."""
    for i in range(args.runs):
        for env in args.envs:
            for rule in args.rules:
                seed = args.seed0 + i
                if (env, rule, seed) in done:
                    continue
                yield {
                    "env": env,
                    "rule": rule,
                    "seed": seed,
                    "tasks": args.tasks,
                    "transport": args.transport,
                    "fresh": args.fresh,
                    "keep": args.keep,
                    "root": str(args.root),
                    "deadline": args.deadline,
                }


def _rate(hits: int, n: int) -> str:
    if n == 0:
        return "-"
    lo, hi = wilson(hits, n)
    return f"{hits}/{n} = {hits / n:.3f} [{lo:.3f}, {hi:.3f}]"


def report(records: list[dict[str, Any]]) -> str:
    """Per cell: counts with 95% Wilson intervals (markdown)."""
    rows = [
        "| env | rule | tasks | runs | stopped | episodes (mean; stopped runs) | named right "
        "(stopped runs) | shown intervals holding the truth at the stop | the same, "
        "all runs at their end | headline agrees | ended with pairs left | CPU s/run |",
        "|" + "---|" * 12,
    ]
    cells: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for r in records:
        if "stopped" in r:
            cells.setdefault((r["env"], r["rule"], r["tasks"]), []).append(r)
    for (env, rule, tasks), rs in sorted(cells.items()):
        stop = [r for r in rs if r["stopped"]]
        key = "mvp_right" if rule == "mvp" else "order_right"
        at_stop = [c for r in stop for c in r["shown_covers"].values()]
        at_end = [c for r in rs for c in r["shown_covers"].values()]
        ep_stop = f"{np.mean([r['episodes'] for r in stop]):.0f}" if stop else "-"
        rows.append(
            f"| {env} | {rule} | {tasks} | {len(rs)} | {_rate(len(stop), len(rs))} | "
            f"{np.mean([r['episodes'] for r in rs]):.0f}; {ep_stop} | "
            f"{_rate(sum(bool(r[key]) for r in stop), len(stop))} | "
            f"{_rate(sum(at_stop), len(at_stop))} | {_rate(sum(at_end), len(at_end))} | "
            f"{sum(r['headline_agrees'] for r in rs)}/{len(rs)} | "
            f"{sum(bool(r['pairs_left']) for r in rs)} | "
            f"{np.mean([r['cpu_s'] for r in rs]):.1f} |"
        )
    rows += [
        "",
        "| env | rule | stopped runs with the decision recorded | tasks at the decision "
        "(mean, range) | episodes then (mean) | intervals then holding the truth |",
        "|" + "---|" * 6,
    ]
    for (env, rule, _), rs in sorted(cells.items()):
        dec = [r for r in rs if r["stopped"] and r.get("stop_tasks")]
        if not dec:
            continue
        cov = [c for r in dec for c in r["stop_covers"].values()]
        t = [r["stop_tasks"] for r in dec]
        rows.append(
            f"| {env} | {rule} | {len(dec)} | {np.mean(t):.1f} ({min(t)}-{max(t)}) | "
            f"{np.mean([r['stop_episodes'] for r in dec]):.0f} | {_rate(sum(cov), len(cov))} |"
        )
    bad = [r for r in records if "error" in r or r.get("rc", 0) != 0]
    skipped = sum(1 for r in records if "skipped" in r)
    rows.append(f"\nfailed runs: {len(bad)}; skipped at the deadline: {skipped}")
    rows += [
        f"  {r['env']} {r['rule']} seed {r['seed']}: {r.get('error', r.get('rc'))}" for r in bad
    ]
    return "\n".join(rows)


def main(argv_: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--envs", type=lambda s: s.split(","), default=list(ENVS))
    p.add_argument("--rules", type=lambda s: s.split(","), default=list(RULES))
    p.add_argument("--runs", type=int, default=150, help="seeds per cell")
    p.add_argument("--tasks", type=int, default=30, help="the task pool of each run (--tasks)")
    p.add_argument("--seed0", type=int, default=SEED0, help="the first seed")
    p.add_argument("--jobs", type=int, default=2, help="worker processes")
    p.add_argument("--transport", choices=("inprocess", "http"), default="inprocess")
    p.add_argument("--fresh", action="store_true", help="python -m agentbus.run per run")
    p.add_argument("--keep", action="store_true", help="keep the run directories")
    p.add_argument("--out", type=Path, help="records, appended (default: ROOT/records.jsonl)")
    p.add_argument("--root", type=Path, default=Path("/tmp/stop_e2e"), help="run directories")
    p.add_argument("--minutes", type=float, default=0.0, help="start no run after this (0: none)")
    p.add_argument("--report", action="store_true", help="only print the table of --out")
    args = p.parse_args(argv_)
    bad = sorted(set(args.envs) - set(ENVS)) + sorted(set(args.rules) - set(RULES))
    if bad or args.runs < 1 or args.tasks < 1 or args.jobs < 1:
        print(f"stop_end_to_end: error: bad setting {bad or 'runs/tasks/jobs < 1'}")
        return 2
    args.deadline = time.time() + 60 * args.minutes if args.minutes else 0.0
    args.out = args.out or args.root / "records.jsonl"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    records = []
    if args.out.exists():
        records = [json.loads(line) for line in args.out.read_text().splitlines() if line]
    if not args.report:
        done = {(r["env"], r["rule"], r["seed"]) for r in records if "stopped" in r}
        todo = list(jobs(args, done))
        print(f"{len(todo)} runs to do, {args.jobs} workers; records in {args.out}", flush=True)
        cpu0 = time.perf_counter()
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(args.jobs) as pool, args.out.open("a") as out:
            for n, rec in enumerate(pool.imap_unordered(one, todo), 1):
                out.write(json.dumps(rec) + "\n")
                out.flush()
                records.append(rec)
                what = (
                    rec.get("skipped")
                    or rec.get("error")
                    or (f"stopped={rec['stopped']} named={rec['named']} ep={rec['episodes']}")
                )
                print(
                    f"[{n}/{len(todo)}] {rec['env']} {rec['rule']} seed {rec['seed']}: "
                    f"{what} cpu {rec.get('cpu_s', 0)} s",
                    flush=True,
                )
        print(f"wall {time.perf_counter() - cpu0:.0f} s")
    for env in args.envs:
        t = truth(env)
        phi = ", ".join(f"{s} {t['phi'][s]:+.3f}" for s in t["order"])
        print(f"truth {env}: {phi}")
    print(report([r for r in records if r["env"] in args.envs and r["rule"] in args.rules]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
