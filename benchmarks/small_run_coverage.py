"""Per-slot coverage of real command-line runs of 5, 10 and 15 tasks against the truth tables.

Why. The coverage figures in docs/statistics.md at small sizes came from
resampling stored per-task outcomes (tests/test_interval_coverage.py): a
replication draws tasks at random from a pool, which no real run does. A
real run takes the generator's first T tasks of its seed, so what it
measures depends on whether that prefix is a fair sample of the population
the truth table describes (the math generator's old order gave 5-task runs
level-1 problems only). This script runs the real command line, ``python
-m agentbus.run --env ENV --tasks T --seed S``, on seeds of its own (far from
the tables' seeds, 1,000,000 on, and the pools', 800,000 on), and checks
each printed Shapley interval (results.json ``ci_low``/``ci_high``) against
the stored table's Shapley value (``python -m agentbus.truth show``).

The table's own standard error (about 0.004) is small against the
intervals of a 5-15 task run (0.1-0.5), so it is ignored here.

Runtime. A run of T tasks plays 16 T episodes at ``--sim-speed 0`` in
process. Measured: ``--runs 8 --jobs 1 --sizes 5,10`` (32 runs) took 817 s
wall at nice 10 on a loaded 2-core machine and 3.7 s of CPU per run. The
full measurement (150 runs per cell, sizes 5, 10, 15, math and ticket) is
900 runs, about an hour of CPU (more for the 15-task runs): ``--jobs`` runs
that many at once.

    python benchmarks/small_run_coverage.py                      # the full measurement
    python benchmarks/small_run_coverage.py --runs 20 --jobs 2   # a reduced one
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from agentbus.app.truth import true_values
from agentbus.sim.truth.table import load
from attribution.replicate import wilson

ENVS = ("math", "ticket")
SIZES = (5, 10, 15)
#: seeds of these runs: apart from the truth tables' (1,000,000 on) and the pools' (800,000 on)
SEED0 = 600_000


def one_run(env: str, tasks: int, seed: int) -> dict[str, tuple[float, float]]:
    """(ci_low, ci_high) per slot of one command-line run."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        args = [sys.executable, "-m", "agentbus.run", "--env", env, "--tasks", str(tasks)]
        args += ["--seed", str(seed), "--sim-speed", "0", "--sim-transport", "inprocess"]
        args += ["--progress", "off", "--no-plots", "--no-trace", "--run-dir", str(run_dir)]
        done = subprocess.run(args, capture_output=True, text=True, timeout=900, cwd=tmp)
        if done.returncode != 0:
            raise RuntimeError(f"{env} {tasks} tasks seed {seed}: {done.stderr[-500:]}")
        results = json.loads((run_dir / "results.json").read_text())
    rows = results["models"]["sim:strong"]["shapley"]
    return {s: (float(r["ci_low"]), float(r["ci_high"])) for s, r in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=150, help="runs per (environment, size)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once")
    parser.add_argument("--envs", default=",".join(ENVS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args()
    start = time.perf_counter()
    envs = args.envs.split(",")
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"{args.runs} command-line runs per cell; truth: the stored tables (weak vs strong)")
    print("env      tasks  slot         coverage  95% Wilson       truth phi")
    for env in envs:
        table = load(env, "sim:weak", "sim:strong")
        truth = true_values(table)
        phi = dict(zip(truth["slots"], truth["shapley"], strict=True))
        for tasks in sizes:
            seeds = [SEED0 + 1000 * tasks + r for r in range(args.runs)]
            with ThreadPoolExecutor(args.jobs) as pool:
                runs = list(pool.map(lambda s, e=env, t=tasks: one_run(e, t, s), seeds))
            for slot, value in phi.items():
                hits = int(sum(lo <= value <= hi for lo, hi in (r[slot] for r in runs)))
                lo, hi = wilson(hits, len(runs))
                print(
                    f"{env:8s} {tasks:5d}  {slot:11s} {hits / len(runs):9.3f}"
                    f"  [{lo:.3f}, {hi:.3f}]  {value:+.3f}"
                )
            pooled = np.mean(
                [lo <= phi[s] <= hi for r in runs for s, (lo, hi) in r.items() if s in phi]
            )
            print(f"{env:8s} {tasks:5d}  pooled      {pooled:9.3f}")
    print(f"runtime {time.perf_counter() - start:.0f} s wall, {args.jobs} at once")


if __name__ == "__main__":
    main()
