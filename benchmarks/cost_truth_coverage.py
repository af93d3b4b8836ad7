"""Coverage of the cost Shapley intervals against the simulator's cost truth (issue 42 item 5).

Why. A run's cost Shapley intervals (attribution.cost: the cost game, paired
by task, no range) had nothing to be checked against. The cost truth
(``python -m agentbus.truth_cost show``) now gives each coalition's expected
prompt and completion tokens per episode and their list-price cost with no
prompt-cache discount. This script plays fresh task blocks, each exactly the
task set of a run ``python -m agentbus.run --tasks 30 --seed S`` (the
reference computation's own in-process path; tests/attribution/test_cost_truth_math.py
checks that a real run's tokens equal it episode by episode), on seeds apart
from the table's (2,000,000 on) and from the reward runs' (600,000-1,000,000
on). For each block and each run size T (the block's first T tasks, as a run
of ``--tasks T`` takes them) it computes the run's cost Shapley interval for
each quantity with the run's estimator (:func:`attribution.exact.shapley_values`
on a ``unit_interval=False`` game) and counts how often it holds the table's
Shapley value. The same intervals cut to 80% of their width are counted too:
a check that cannot tell them apart would prove nothing.

The table's own standard error is stated by ``show``; it is a few percent of
a 5-30 task interval's half-width, so a hit is counted against the table's
value as it stands.

    python benchmarks/cost_truth_coverage.py --blocks 150           # the measurement
    python benchmarks/cost_truth_coverage.py --blocks 20            # a reduced one

Runtime: one block (30 tasks x 16 coalitions = 480 episodes) is about 4 s of
CPU; the script prints its own.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from agentbus.app.truth_cost import games, true_shapley
from agentbus.llm.prices import PriceTable
from agentbus.sim.truth import cost as costs
from agentbus.sim.truth.cost import QUANTITIES
from agentbus.sim.truth.reference import Setting, compute
from attribution.exact import shapley_values
from attribution.replicate import wilson

SEED0 = 3_000_000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="math")
    p.add_argument("--blocks", type=int, default=150)
    p.add_argument("--sizes", default="5,10,15,30")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--first-seed", type=int, default=SEED0)
    p.add_argument(
        "--table-dir", type=Path, help="where the cost table is (default: the package's)"
    )
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    setting = Setting(env=args.env, default="sim:weak", test="sim:strong", per_seed=max(sizes))
    started, cpu = time.perf_counter(), time.process_time()
    sums = compute(
        setting,
        list(range(args.first_seed, args.first_seed + args.blocks)),
        workers=args.workers,
        per_task=True,
    )
    table = costs.load(args.env, setting.default, setting.test, args.table_dir)
    prices = PriceTable()
    truth = {q: true_shapley(table, q, table.slots)[0] for q in QUANTITIES}
    by_block: dict[int, list[str]] = defaultdict(list)
    for seed, task in sorted(sums.usage or {}):
        by_block[seed].append(task)
    hits = {(q, t): [] for q in QUANTITIES for t in sizes}  # type: dict[tuple[str, int], list]
    narrow = {(q, t): [] for q in QUANTITIES for t in sizes}  # type: dict[tuple[str, int], list]
    for seed, tasks in sorted(by_block.items()):
        for size in sizes:
            uses = []
            for task in tasks[:size]:
                for key, usage in (sums.usage or {})[(seed, task)].items():
                    members = set(key.split("+")) if key else set()
                    coalition = tuple(s for s in table.slots if s in members)
                    uses.append(
                        (task, coalition, costs.episode_use(usage, members, setting, prices))
                    )
            found = games(uses, table.slots)
            for q in QUANTITIES:
                est = shapley_values(found[q])
                low, high = np.asarray(est.ci_low), np.asarray(est.ci_high)
                hits[(q, size)].append((low <= truth[q]) & (truth[q] <= high))
                centre, half = (low + high) / 2, 0.4 * (high - low)
                narrow[(q, size)].append((centre - half <= truth[q]) & (truth[q] <= centre + half))
    blocks = len(by_block)
    print(
        f"cost Shapley coverage, {args.env}, {blocks} fresh blocks (seeds {args.first_seed}-"
        f"{args.first_seed + blocks - 1}), against the stored cost truth "
        f"({table.provenance.tasks} reference tasks)"
    )
    print(
        f"{'quantity':<18} {'tasks':>5}  "
        + "  ".join(f"{s:>20}" for s in table.slots)
        + "   80% width"
    )
    for q in QUANTITIES:
        for size in sizes:
            h = np.asarray(hits[(q, size)])
            cells = []
            for i in range(len(table.slots)):
                lo, hi = wilson(int(h[:, i].sum()), blocks)
                cells.append(f"{h[:, i].mean():.3f} [{lo:.3f},{hi:.3f}]")
            n80 = np.asarray(narrow[(q, size)]).mean(axis=0)
            print(
                f"{q:<18} {size:>5}  " + "  ".join(f"{c:>20}" for c in cells)
                + "   " + " ".join(f"{x:.3f}" for x in n80)
            )  # fmt: skip
    for q in QUANTITIES:
        pooled = np.mean([np.mean(hits[(q, t)]) for t in sizes])
        cut = np.mean([np.mean(narrow[(q, t)]) for t in sizes])
        print(f"{q:<18} pooled over sizes and slots: {pooled:.3f} (80% width: {cut:.3f})")
    print(
        f"{sums.episodes} episodes, {time.perf_counter() - started:.0f} s wall, "
        f"{time.process_time() - cpu:.0f} s CPU in this process (workers add theirs)"
    )


if __name__ == "__main__":
    main()
