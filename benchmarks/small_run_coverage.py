"""Per-slot coverage of real command-line runs of 5, 10 and 15 tasks against the truth tables.

Why. The coverage figures in docs/statistics.md at small sizes came from
resampling stored per-task outcomes (tests/attribution/test_interval_coverage.py): a
replication draws tasks at random from a pool, which no real run does. A
real run takes the generator's first T tasks of its seed, so what it
measures depends on whether that prefix is a fair sample of the population
the truth table describes (the math generator's old order gave 5-task runs
level-1 problems only). This script runs the real command line, ``python
-m agentbus.run --env ENV --tasks T --seed S``, on seeds of its own (far from
the tables' seeds, 1,000,000 on, and the pools', 800,000 on), and checks
each printed Shapley interval (results.json ``ci_low``/``ci_high``) against
the stored table's Shapley value (``python -m agentbus.truth show``).

The table's own standard error (printed, 0.001-0.002) is small against the
intervals of a 5-15 task run (median widths 0.12-0.69), so a hit is counted
against the table's value as it stands. Per slot the report also prints the misses
below and above, how likely that few hits are if the interval covered 95%
(one-sided binomial), the mean estimate minus the truth (a prefix that is
not a sample of the table's population shows here) and the median width of
the missed intervals against all.

Runtime. A run of T tasks plays 16 T episodes at ``--sim-speed 0`` in
process: 2.3-6.4 s of CPU per run here (ticket 5 tasks to math 15 tasks),
about 3,800 CPU seconds for the full measurement (150 runs per cell, sizes
5, 10, 15, math and ticket: 900 runs); on the 16-core lent machine the runs
took 4-26 s of CPU each (docs/statistics.md). ``--jobs`` runs that many at
once; the runs are submitted cell by cell in turn, so ``--deadline`` (start
no run after that many seconds) leaves every cell with about the same
number, and ``--first`` continues at a later run index. ``--out`` keeps
every run's intervals as JSON (written as the runs end), and ``--report
FILE...`` prints the table of one or more such files (a seed in two counts
once).

    python benchmarks/small_run_coverage.py --jobs 16 --out cov.json   # the full measurement
    python benchmarks/small_run_coverage.py --runs 20 --jobs 2         # a reduced one

It runs where agentbus is not installed too: ``PYTHONPATH=/tmp/site:.`` (the
dependencies' wheels unpacked in /tmp/site, the repository root holding
agentbus.egg-info for the entry points) is passed on to the runs as absolute
paths, since each run starts in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binom

from agentbus.app.truth import true_values
from agentbus.sim.truth.table import load
from attribution.replicate import wilson

ENVS = ("math", "ticket")
SIZES = (5, 10, 15)
#: seeds of these runs: apart from the truth tables' (1,000,000 on) and the pools' (800,000 on)
SEED0 = 600_000
#: a run that takes longer than this (seconds) is killed and counted as failed
RUN_TIMEOUT = 900


def child_env() -> dict[str, str]:
    """The environment for a run: PYTHONPATH's entries made absolute (runs start elsewhere)."""
    env = dict(os.environ)
    if env.get("PYTHONPATH"):
        parts = env["PYTHONPATH"].split(os.pathsep)
        env["PYTHONPATH"] = os.pathsep.join(str(Path(p or ".").resolve()) for p in parts)
    return env


def one_run(env: str, tasks: int, seed: int) -> dict[str, Any]:
    """One command-line run: per slot (estimate, ci_low, ci_high), its CPU and wall seconds."""
    args = [sys.executable, "-m", "agentbus.run", "--env", env, "--tasks", str(tasks)]
    args += ["--seed", str(seed), "--sim-speed", "0", "--sim-transport", "inprocess"]
    args += ["--progress", "off", "--no-plots", "--no-trace"]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        log = Path(tmp) / "log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [*args, "--run-dir", str(run_dir)],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=tmp,
                env=child_env(),
            )
            killer = threading.Timer(RUN_TIMEOUT, proc.kill)
            killer.start()
            # wait4, not wait: the run's own CPU time (rusage of this child alone)
            _, status, usage = os.wait4(proc.pid, 0)
            killer.cancel()
            proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"{env} {tasks} tasks seed {seed}: {log.read_text()[-500:]}")
        results = json.loads((run_dir / "results.json").read_text())
    rows = results["models"]["sim:strong"]["shapley"]
    slots = {s: [float(r[k]) for k in ("value", "ci_low", "ci_high")] for s, r in rows.items()}
    cpu = usage.ru_utime + usage.ru_stime
    wall = time.perf_counter() - start
    return {"env": env, "tasks": tasks, "seed": seed, "cpu_s": cpu, "wall_s": wall, "slots": slots}


def truths(envs: list[str]) -> dict[str, dict[str, list[float]]]:
    """Per environment and slot: the stored table's Shapley value and its standard error."""
    out: dict[str, dict[str, list[float]]] = {}
    for env in envs:
        t = true_values(load(env, "sim:weak", "sim:strong"))
        out[env] = {
            s: [float(v), float(e)]
            for s, v, e in zip(t["slots"], t["shapley"], t["shapley_se"], strict=True)
        }
    return out


def report(parts: list[dict[str, Any]]) -> None:
    """Print per cell and slot: coverage, its Wilson interval, misses below/above, the bias.

    ``parts`` are --out files of the same measurement (a seed run in two counts once).
    """
    runs = {
        (r["env"], r["tasks"], r["seed"]): {**r, "part": i}
        for i, d in enumerate(parts)
        for r in d["runs"]
    }
    sizes = sorted({t for d in parts for t in d["meta"]["sizes"]})
    print("command-line runs against the stored tables (weak vs strong)")
    head = "env      tasks  slot           n  coverage  95% Wilson      miss lo/hi"
    print(head + "  P(<=|0.95)  truth phi (se)   mean est - truth (se)  width missed/all")
    for env, phi in parts[0]["truth"].items():
        for tasks in sizes:
            cell = [r for r in runs.values() if r["env"] == env and r["tasks"] == tasks]
            if cell:
                cell_lines(env, tasks, phi, cell, parts)
    for i, d in enumerate(parts):
        m = d["meta"]
        print(
            f"part {i}: {m['note']}: {len(d['runs'])} runs, {len(d['failed'])} failed,"
            f" {m['wall_s']:.0f} s wall, {m['jobs']} at once on {m['cpus']} CPUs,"
            f" {sum(r['cpu_s'] for r in d['runs']):.0f} CPU s in the runs; {m['python']}"
        )
        for line in d["failed"][:5]:
            print(f"  {line}")


def cell_lines(
    env: str,
    tasks: int,
    phi: dict[str, list[float]],
    cell: list[dict[str, Any]],
    parts: list[dict[str, Any]],
) -> None:
    """The lines of one (environment, size): one per slot, then the range and the CPU."""
    n = len(cell)
    cover = []
    for slot, (value, se) in phi.items():
        est = np.array([r["slots"][slot] for r in cell])
        below, above = int(np.sum(est[:, 2] < value)), int(np.sum(est[:, 1] > value))
        hits = n - below - above
        cover.append(hits / n)
        lo, hi = wilson(hits, n)
        bias = est[:, 0].mean() - value
        bias_se = est[:, 0].std(ddof=1) / np.sqrt(n) if n > 1 else 0.0
        width = est[:, 2] - est[:, 1]
        missed = (est[:, 2] < value) | (est[:, 1] > value)
        width_missed = np.median(width[missed]) if below + above else np.nan
        widths = f"{width_missed:.3f}/{np.median(width):.3f}"
        # how likely this few hits are if the interval covered 95% (one-sided binomial)
        p_low = binom.cdf(hits, n, 0.95)
        print(
            f"{env:8s} {tasks:5d}  {slot:11s} {n:4d} {hits / n:9.3f}"
            f"  [{lo:.3f}, {hi:.3f}]  {below:4d}/{above:<4d}  {p_low:10.3f}"
            f"  {value:+.3f} ({se:.3f})  {bias:+.4f} ({bias_se:.4f})   {widths}"
        )
    cpu = [
        f"{np.mean([r['cpu_s'] for r in cell if r['part'] == i]):.2f} s on {d['meta']['cpus']} CPUs"
        for i, d in enumerate(parts)
        if any(r["part"] == i for r in cell)
    ]
    print(
        f"{env:8s} {tasks:5d}  slots {min(cover):.3f}-{max(cover):.3f}, pooled"
        f" {np.mean(cover):.3f}; CPU per run {', '.join(cpu)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=150, help="runs per (environment, size)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once")
    parser.add_argument("--envs", default=",".join(ENVS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--first", type=int, default=0, help="first run index (seed offset)")
    parser.add_argument("--deadline", type=float, help="start no run after this many seconds")
    parser.add_argument("--out", type=Path, help="write every run's intervals here (JSON)")
    parser.add_argument(
        "--report", type=Path, nargs="+", help="print the table of --out files and stop"
    )
    args = parser.parse_args()
    if args.report:
        report([json.loads(p.read_text()) for p in args.report])
        return
    start = time.perf_counter()
    envs = args.envs.split(",")
    sizes = [int(x) for x in args.sizes.split(",")]
    note = f"runs r = {args.first} to {args.first + args.runs - 1} (seed {SEED0} + 1000 T + r)"
    meta = {"note": note, "sizes": sizes, "jobs": args.jobs, "cpus": os.cpu_count()}
    meta["python"] = sys.version.split()[0]
    data: dict[str, Any] = {"meta": meta, "truth": truths(envs), "runs": [], "failed": []}
    # cell by cell in turn, so that a deadline leaves every cell with about as many runs
    indices = range(args.first, args.first + args.runs)
    order = [(e, t, SEED0 + 1000 * t + r) for r in indices for t in sizes for e in envs]
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(one_run, *job) for job in order]
        for i, fut in enumerate(as_completed(futures)):
            if fut.cancelled():
                continue
            try:
                data["runs"].append(fut.result())
            except RuntimeError as exc:
                data["failed"].append(str(exc))
            late = args.deadline is not None and time.perf_counter() - start > args.deadline
            if late:
                for other in futures:
                    other.cancel()
            if args.out and (i % 50 == 49 or late):
                meta["wall_s"] = time.perf_counter() - start
                args.out.write_text(json.dumps(data))
    meta["wall_s"] = time.perf_counter() - start
    if args.out:
        args.out.write_text(json.dumps(data))
    report([data])


if __name__ == "__main__":
    main()
