"""Every environment against its truth table: the drift check, at full size and for atp.

The suite's ``tests/environments/test_truth_drift.py`` runs one 30-task block with two
coalitions (all default, and the strong action module) for every
environment with a table except atp, whose episodes cost about 1.6 s of Coq
CPU each (a 30-task check of one coalition measured 48 s). This script runs
the same check for any environments, atp included, on any seeds and
coalitions, and prints what ``truth compare`` prints: each coalition's
z-score and the joint max-|z| test (false-alarm rate at most 1% per run,
stated and measured from the table).

    python benchmarks/truth_drift.py                      # every table, seed 0, 2 coalitions
    python benchmarks/truth_drift.py --env atp --seeds 0 1 --all
    python benchmarks/truth_drift.py --env ticket tools --false-alarms 200
    python benchmarks/truth_drift.py --env git os --false-alarms 200 --tasks 5
    python benchmarks/truth_drift.py --calibration        # false alarms and power, 2-30 tasks

``--calibration`` measures the joint tests on real per-task outcomes of the
simulator (the pools of tests/data/per_task: math, tools, navigation, all 16
coalitions), without running anything. A run of T tasks is drawn as a real
run is made: T distinct tasks of one of the pool's 30-task blocks (a block
is one generator seed; a run's first T tasks are a random T of its block),
tested against the table with the pool's own means as the truth; the share
flagged by the max-|z| test, the mean-shift test and either (the verdict),
beside the Bonferroni bound on max |z| with a normal approximation that the
test used before. Then the same runs with every coalition's mean moved by
+0.05 and +0.10 (clipped at 1): the power against a coherent shift. At 30
tasks there are only as many distinct runs as blocks (20 or 40); ``--iid``
draws tasks from the whole pool with replacement instead (a generator that
does not stratify its blocks: rougher than the tables' own).

``--false-alarms N`` measures the joint test's false-alarm rate on real runs
instead: N fresh blocks (seeds 5000 on, or ``--first-seed``) of the current
code, each tested against the table; the share flagged, and max |z|'s
median, 95th percentile and maximum; then the mean over all N runs tested
against the table (``pooled``). ``--tasks T`` makes each run the first T
tasks of its seed instead of a whole block: where every prefix of a run is
a random sample of the table's block (issue 42), short runs agree with the
table too, and the pooled mean over many of them shows a generator whose
prefixes are not. Exit status 1 when any joint test flags drift (not counted
in ``--false-alarms`` mode).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import ndtri

from agentbus.app.truth import drift_lines
from agentbus.sim.truth import table as tables
from agentbus.sim.truth.drift import ALPHA, drift
from agentbus.sim.truth.reference import Setting, run_seeds, summarise


def false_alarms(
    env: str, count: int, every: bool, tasks: int | None = None, first: int = 5000
) -> None:
    """Run ``count`` fresh blocks of ``env`` and print how often the joint test flags one.

    ``tasks``: runs of that many tasks (the first of each seed's block) instead of
    whole blocks. The pooled line tests the mean over all ``count`` runs against
    the table: a generator whose short runs are not samples of its block fails it.
    """
    table = tables.load(env, "sim:weak", "sim:strong")
    keys = tuple(table.values) if every else ("", "action")
    started = time.perf_counter()
    size = tasks or table.provenance.tasks_per_seed
    setting = Setting(env, "sim:weak", "sim:strong", per_seed=size, coalitions=keys)
    sums = run_seeds(setting, range(first, first + count))
    zs, alarms = [], 0
    for block in sums.blocks.values():
        run = {k: (int(block[k][1]), block[k][0] / block[k][1]) for k in keys}
        result = drift(table, run, keys)
        zs.append(result.max_z)
        alarms += result.alarm
    z = np.array(zs)
    pooled = drift(table, {k: (v.tasks, v.mean) for k, v in summarise(sums).items()}, keys)
    zs_pooled = " ".join(
        f"{r.key or 'default'} {r.mean:.3f} vs {r.truth:.3f} z {r.z:+.2f}" for r in pooled.rows
    )
    print(
        f"{env}: {count} fresh runs of {size} tasks (seeds {first}-{first + count - 1}), "
        f"{len(keys)} coalitions: "
        f"{alarms} flagged ({alarms / count:.1%}); max |z| median {np.median(z):.2f}, "
        f"95th percentile {np.quantile(z, 0.95):.2f}, max {z.max():.2f} "
        f"({time.perf_counter() - started:.0f} s); pooled: {zs_pooled}",
        flush=True,
    )


POOLS = Path(__file__).resolve().parents[1] / "tests" / "data" / "per_task"
SIZES = (2, 3, 5, 10, 30)
SHIFTS = (0.0, 0.05, 0.10)


def calibration(
    env: str, runs: int, sizes: tuple[int, ...] = SIZES, seed: int = 0, iid: bool = False
) -> None:
    """Print the tests' flag rates on ``runs`` resampled runs of each size, honest and shifted."""
    pool = np.load(POOLS / f"{env}.npz")
    keys = [str(k) for k in pool["keys"]]
    rewards = pool["rewards"].astype(float)
    table = tables.load(env, "sim:weak", "sim:strong")
    means = {k: float(rewards[:, i].mean()) for i, k in enumerate(keys)}
    truth = table.model_copy(
        update={"values": {k: table.values[k].model_copy(update={"mean": means[k]}) for k in keys}}
    )
    bonferroni = float(ndtri(1.0 - ALPHA / (2 * len(keys))))
    rng = np.random.default_rng(seed)
    blocks = [np.flatnonzero(pool["seeds"] == s) for s in np.unique(pool["seeds"])]
    for size in sizes:
        if iid:
            picks = [rng.integers(0, len(rewards), size) for _ in range(runs)]
        else:
            picks = [
                rng.choice(blocks[rng.integers(len(blocks))], size, replace=False)
                for _ in range(runs)
            ]
        draws = [rewards[rows].mean(axis=0) for rows in picks]
        for shift in SHIFTS:
            far = moved = either = old = 0
            for m in draws:
                run = {k: (size, float(min(1.0, m[i] + shift))) for i, k in enumerate(keys)}
                d = drift(truth, run, keys)
                far += d.max_z > d.threshold
                moved += abs(d.shift_z) > d.shift_threshold
                either += d.alarm
                old += d.max_z > bonferroni
            print(
                f"{env:<10} {size:>3} tasks  shift {shift:+.2f}  flagged {either / runs:.3f} "
                f"(max |z| {far / runs:.3f}, mean shift {moved / runs:.3f}; "
                f"Bonferroni-normal max |z| {old / runs:.3f})  "
                f"[{runs} runs, {'iid' if iid else 'within blocks'}]",
                flush=True,
            )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    stored = sorted(
        t.env for t in tables.available() if (t.default, t.test) == ("sim:weak", "sim:strong")
    )
    p.add_argument("--env", nargs="+", default=stored, choices=stored)
    p.add_argument("--seeds", nargs="+", type=int, default=[0], help="one run (block) per seed")
    p.add_argument("--all", action="store_true", help="all 16 coalitions (default: '' and action)")
    p.add_argument("--false-alarms", type=int, default=0, help="N fresh blocks: the alarm rate")
    p.add_argument("--tasks", type=int, default=None, help="runs of N tasks (default: a block)")
    p.add_argument("--first-seed", type=int, default=5000, help="--false-alarms' first seed")
    p.add_argument(
        "--calibration",
        type=int,
        nargs="?",
        const=4000,
        default=0,
        metavar="RUNS",
        help="flag rates and power on resampled per-task pools (RUNS a cell)",
    )
    args = p.parse_args()
    if args.calibration:
        for env in ("math", "tools", "navigation"):
            calibration(env, args.calibration)
        return 0
    if args.false_alarms:
        for env in args.env:
            false_alarms(env, args.false_alarms, args.all, args.tasks, args.first_seed)
        return 0
    alarms = 0
    for env in args.env:
        table = tables.load(env, "sim:weak", "sim:strong")
        keys = tuple(table.values) if args.all else ("", "action")
        for seed in args.seeds:
            started = time.perf_counter()
            size = args.tasks or table.provenance.tasks_per_seed
            setting = Setting(env, "sim:weak", "sim:strong", per_seed=size, coalitions=keys)
            sums = run_seeds(setting, [seed])
            run = {k: (v.tasks, v.mean) for k, v in summarise(sums).items()}
            lines, alarm = drift_lines(table, run, keys, applies=True)
            alarms += alarm
            print(f"{env} seed {seed} ({time.perf_counter() - started:.0f} s)", *lines, sep="\n")
            sys.stdout.flush()
    return 1 if alarms else 0


if __name__ == "__main__":
    raise SystemExit(main())
