"""Every environment against its truth table: the drift check, at full size and for atp.

The suite's ``tests/test_truth_drift.py`` runs one 30-task block with two
coalitions (all default, and the strong action module) for every
environment with a table except atp, whose episodes cost about 1.6 s of Coq
CPU each (a 30-task check of one coalition measured 48 s). This script runs
the same check for any environments, atp included, on any seeds and
coalitions, and prints what ``truth compare`` prints: each coalition's
z-score and the joint max-|z| test (false-alarm rate at most 1% per run,
stated and measured from the table).

    python benchmarks/truth_drift.py                      # every table, seed 0, 2 coalitions
    python benchmarks/truth_drift.py --env atp --seeds 0 1 --all

Exit status 1 when any joint test flags drift.
"""

from __future__ import annotations

import argparse
import sys
import time

from agentbus.app.truth import drift_lines
from agentbus.sim.truth import table as tables
from agentbus.sim.truth.reference import Setting, run_seeds, summarise


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    stored = sorted(
        t.env for t in tables.available() if (t.default, t.test) == ("sim:weak", "sim:strong")
    )
    p.add_argument("--env", nargs="+", default=stored, choices=stored)
    p.add_argument("--seeds", nargs="+", type=int, default=[0], help="one run (block) per seed")
    p.add_argument("--all", action="store_true", help="all 16 coalitions (default: '' and action)")
    args = p.parse_args()
    alarms = 0
    for env in args.env:
        table = tables.load(env, "sim:weak", "sim:strong")
        keys = tuple(table.values) if args.all else ("", "action")
        for seed in args.seeds:
            started = time.perf_counter()
            setting = Setting(
                env, "sim:weak", "sim:strong", per_seed=table.provenance.tasks_per_seed,
                coalitions=keys,
            )  # fmt: skip
            sums = run_seeds(setting, [seed])
            run = {k: (v.tasks, v.mean) for k, v in summarise(sums).items()}
            lines, alarm = drift_lines(table, run, keys, applies=True)
            alarms += alarm
            print(f"{env} seed {seed} ({time.perf_counter() - started:.0f} s)", *lines, sep="\n")
            sys.stdout.flush()
    return 1 if alarms else 0


if __name__ == "__main__":
    raise SystemExit(main())
