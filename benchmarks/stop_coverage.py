"""Per-slot coverage at an adaptive stop, for ``--stop halfwidth``, ``mvp`` and ``ranking``.

Why. A rule that stops when the data look a certain way selects runs where
they do: stopping when the top slot looks separated picks runs where it is
high, and its fixed-sample interval then covers less than 95% (an audit saw
0.90 for the top slot, 0.80 for action). This script replays adaptive runs on
stored per-task outcomes of the real simulator (the pools of
tests/data/per_task/, the same episodes the interval coverage tests use),
applies each rule after every task with the code the live service uses
(:func:`attribution.stopping.running_estimates`, :func:`attribution.stopping.reached`),
and measures at the stop, per slot, how often the fixed-sample interval and
the anytime-valid one hold the pool's exact Shapley value.

What a run shows (attribution.results.lead_with_stop_interval): at an
``mvp`` or ``ranking`` stop the anytime-valid interval, at a ``halfwidth``
stop the fixed-sample one; the last column is the interval shown.

    python benchmarks/stop_coverage.py            # 2,000 runs per cell: about 2-4 min
    python benchmarks/stop_coverage.py --runs 300 # quicker; tests/attribution/test_stop_interval.py
    python benchmarks/stop_coverage.py --sizes     # both intervals of plain runs, 2-30 tasks

``--sizes`` checks the two intervals a plain (not adaptive) run reports, at
2, 3, 5, 10, 20 and 30 tasks: runs of T tasks drawn from the pool, their
exact game estimated as a run estimates it (``attribution.exact``, the
anytime sequence tuned to the run's planned size, T), and per size the
coverage of ``ci_*`` and ``cs_*`` of the pool's exact Shapley values and
the share of slot intervals whose ``cs_*`` is narrower than ``ci_*`` (an
interval valid at every stop cannot be).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from attribution import stopping
from attribution.exact import shapley_values
from attribution.replicate import (
    draw_game,
    load_pool,
    per_task_shapley,
    shapley_by_permutations,
)

POOLS = Path(__file__).resolve().parents[1] / "tests" / "data" / "per_task"
ENVS = ("math", "tools", "navigation")
RULES = ("halfwidth", "mvp", "ranking")
#: the halfwidth rule's target (what --target-halfwidth would say)
TARGET = 0.08
#: the longest replayed run (and the anytime sequence's horizon), in tasks
MAX_TASKS = 200
#: the interval each rule's stop shows (attribution.results.STOP_INTERVAL)
SHOWN = {"halfwidth": "fixed", "mvp": "anytime", "ranking": "anytime"}


def replay(
    env: str, rule: str, runs: int, seed: int = 0
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, int, float]:
    """(slots, fixed hits, anytime hits (runs x slots), runs that met the rule, mean tasks)."""
    pool = load_pool(POOLS / f"{env}.npz")
    phi = per_task_shapley(pool, "reward")
    truth = shapley_by_permutations(pool.mean_game(), pool.slots)
    slots = tuple(pool.slots)
    rng = np.random.default_rng(seed)
    fixed = np.zeros((runs, len(slots)), dtype=bool)
    anytime = np.zeros((runs, len(slots)), dtype=bool)
    met = 0
    tasks = 0
    for r in range(runs):
        draw = phi[rng.integers(0, pool.tasks, MAX_TASKS)]
        est = stopping.first_stop(
            stopping.running_estimates(draw, slots, horizon_tasks=MAX_TASKS), rule, TARGET
        )
        met += stopping.reached(est, rule, TARGET, est.units)
        tasks += est.units
        fixed[r] = (est.ci_low <= truth) & (truth <= est.ci_high)
        cs = [est[s] for s in slots]
        anytime[r] = [c.cs_low <= t <= c.cs_high for c, t in zip(cs, truth, strict=True)]
    return slots, fixed, anytime, met, tasks / runs


SIZES = (2, 3, 5, 10, 20, 30)


def sizes(env: str, runs: int, seed: int = 0) -> list[tuple[int, float, float, float]]:
    """Per size: (tasks, ci_* coverage, cs_* coverage, share of cs_* narrower than ci_*)."""
    pool = load_pool(POOLS / f"{env}.npz")
    truth = shapley_by_permutations(pool.mean_game(), pool.slots)
    rng = np.random.default_rng(seed)
    out = []
    for n in SIZES:
        fixed = anytime = narrower = 0
        for _ in range(runs):
            est = shapley_values(draw_game(pool, rng, n), horizon=n)  # planned at its size
            low, high = est.bounds()
            cs_low, cs_high = est.anytime_bounds()
            fixed += int(np.sum((low <= truth) & (truth <= high)))
            anytime += int(np.sum((cs_low <= truth) & (truth <= cs_high)))
            narrower += int(np.sum((cs_low > low + 1e-12) | (cs_high < high - 1e-12)))
        cells = runs * len(pool.slots)
        out.append((n, fixed / cells, anytime / cells, narrower / cells))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--sizes", action="store_true", help="plain runs of 2-30 tasks")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.sizes:
        print(f"{args.runs} runs per cell; coverage pooled over slots")
        print("env         tasks  fixed (ci_*)  anytime (cs_*)  cs_* narrower than ci_*")
        for env in ENVS:
            for n, ci, cs, narrower in sizes(env, args.runs):
                print(f"{env:10s} {n:6d} {ci:13.3f} {cs:15.3f} {narrower:24.3f}")
        print(f"runtime {time.perf_counter() - start:.0f} s")
        return
    print(f"{args.runs} replayed runs per cell, at most {MAX_TASKS} tasks, halfwidth +/-{TARGET}")
    print("env        rule       met   tasks  slot         fixed  anytime  shown")
    for env in ENVS:
        for k, rule in enumerate(RULES):
            slots, fixed, anytime, met, tasks = replay(env, rule, args.runs, seed=k)
            for i, slot in enumerate(slots):
                shown = (anytime if SHOWN[rule] == "anytime" else fixed)[:, i].mean()
                head = f"{env:10s} {rule:9s} {met / args.runs:5.2f} {tasks:6.0f}"
                print(
                    f"{head if i == 0 else ' ' * len(head)}  {slot:11s}"
                    f" {fixed[:, i].mean():6.3f} {anytime[:, i].mean():8.3f} {shown:6.3f}"
                )
    print(f"runtime {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
