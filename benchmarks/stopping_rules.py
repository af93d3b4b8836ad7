"""Coverage of adaptive stopping rules, on real per-task outcomes of the simulator.

The end-to-end test (tests/attribution/test_truth_coverage.py) runs the whole pipeline
80 times with adaptive stopping: enough to check that each run shows the
estimator's interval and stops by the rule, far too few to tell 0.94 from
0.96 (one set of 100 task blocks has a coverage spread of about 0.015 by
itself). This script measures the rules' coverage:

1. It runs the reference computation (every coalition on every task of
   ``--seeds`` generator blocks, simulator in process, temperature 0: the
   same episodes a run would play) and keeps each task's reward per
   coalition.
2. It replays many adaptive runs by resampling: draw a block, shuffle its
   tasks (the scheduler's seeded order), take tasks one by one and apply
   each stopping rule to the task-paired estimate of the two-slot game
   ``--slots`` (the others at the default model). The true phi comes from
   the stored truth table, as in the coverage test.

Rules compared (95% intervals, t quantile with tasks - 1 degrees of freedom;
symmetric unless "used" says otherwise):

* ``fixed@min``: no stopping, the interval after ``--min-tasks`` tasks;
* ``skewed@min``: as ``fixed@min``, centred for skewness (Johnson 1978), a
  candidate for calibrating the ordinary interval at this size;
* ``fixed@pool``: no stopping, the whole block;
* ``chow-robbins``: stop at the first n >= ``--min-tasks`` whose fixed-sample
  interval is under ``--target`` for every slot (Chow and Robbins 1965; how
  ``--adaptive`` runs stop);
* ``used@min`` and ``chow-robbins/used``: as ``fixed@min`` and
  ``chow-robbins``, with the interval runs print
  (:func:`attribution.variance.per_task_bounds`: the t interval widened on
  the skewed side, Hall 1992, and the floor where no task differed), the
  half-width the rule compares being half its width;
* ``anytime``: stop at the first n >= ``--min-tasks`` whose anytime-valid
  interval (attribution.variance.anytime_factor, tuned to the block's
  tasks) is under the target, showing that interval (what adaptive runs
  showed before they switched to Chow-Robbins) and, as ``anytime/fixed``,
  the fixed-sample one at the same stop.

Printed per rule: coverage (all slots, then each), tasks at the stop, the
share of draws that stopped on the target, and the spread of coverage over
batches of 100 draws (what a 100-replication test sees). Last line: each
rule's coverage next to fixed@min, the ratio to compare.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

# This file is named like the package it measures; keep its folder off the path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from agentbus.core.coalitions import coalition_key  # noqa: E402
from agentbus.sim.truth.reference import Setting, Sums, coalition_keys, compute  # noqa: E402
from agentbus.sim.truth.table import load  # noqa: E402
from attribution.exact import exact_values, shapley_matrix  # noqa: E402
from attribution.variance import anytime_factor, per_task_bounds  # noqa: E402

FloatArray = np.ndarray


def per_task_phi(
    sums: Sums, agent_slots: Sequence[str], slots: Sequence[str]
) -> dict[int, FloatArray]:
    """Block (seed) -> tasks x slots array of each task's Shapley values in the sub-game."""
    coef = shapley_matrix(len(slots))  # slots x masks
    keys = [
        coalition_key(agent_slots, [s for i, s in enumerate(slots) if m >> i & 1])
        for m in range(1 << len(slots))
    ]
    blocks: dict[int, list[FloatArray]] = {}
    for (seed, _task), rewards in sorted((sums.tasks or {}).items()):
        v = np.array([rewards[k] for k in keys])
        blocks.setdefault(seed, []).append(coef @ v)
    return {seed: np.array(rows) for seed, rows in blocks.items()}


def interval(x: FloatArray, n: int) -> tuple[FloatArray, FloatArray]:
    """Mean and t-based standard error of the first ``n`` rows (paired by task)."""
    part = x[:n]
    return part.mean(axis=0), part.std(axis=0, ddof=1) / math.sqrt(n)


#: (centre, half-width or (low, high), tasks at the stop, stopped on the target)
Outcome = tuple[FloatArray, FloatArray | tuple[FloatArray, FloatArray], int, bool]
Rule = Callable[[FloatArray], Outcome]


def rules(target: float, min_tasks: int, pool: int) -> dict[str, Rule]:
    def t(n: int) -> float:
        return float(stats.t.ppf(0.975, n - 1))

    def fixed_at(n_of: Callable[[int], int]) -> Rule:
        def rule(x: FloatArray) -> tuple[FloatArray, FloatArray, int, bool]:
            n = min(n_of(len(x)), len(x))
            m, se = interval(x, n)
            hw = t(n) * se
            return m, hw, n, bool(np.all(hw <= target))

        return rule

    def chow_robbins(x: FloatArray) -> tuple[FloatArray, FloatArray, int, bool]:
        for n in range(min(min_tasks, len(x)), len(x) + 1):
            m, se = interval(x, n)
            if np.all(t(n) * se <= target):
                return m, t(n) * se, n, True
        return m, t(len(x)) * se, len(x), False

    def anytime(x: FloatArray, show_fixed: bool) -> tuple[FloatArray, FloatArray, int, bool]:
        for n in range(min(min_tasks, len(x)), len(x) + 1):
            m, se = interval(x, n)
            cs = anytime_factor(n, pool, 0.05) * se
            if np.all(cs <= target):
                return m, (t(n) * se if show_fixed else cs), n, True
        return m, (t(len(x)) * se if show_fixed else cs), len(x), False

    def skew_shifted(x: FloatArray) -> tuple[FloatArray, FloatArray, int, bool]:
        # Johnson (1978): centre the t-interval at mean + mu3 / (6 s^2 n), which
        # removes the first-order effect of skewness on the t statistic
        n = min(min_tasks, len(x))
        m, se = interval(x, n)
        part = x[:n]
        mu3 = ((part - m) ** 3).mean(axis=0) * n * n / ((n - 1) * (n - 2))
        var = se * se * n
        shift = np.divide(mu3, 6.0 * var * n, out=np.zeros_like(mu3), where=var > 0)
        hw = t(n) * se
        return m + shift, hw, n, bool(np.all(hw <= target))

    def used_at_min(x: FloatArray) -> Outcome:
        n = min(min_tasks, len(x))
        low, high = per_task_bounds(x[:n])
        return x[:n].mean(axis=0), (low, high), n, bool(np.all((high - low) / 2 <= target))

    def chow_robbins_used(x: FloatArray) -> Outcome:
        for n in range(min(min_tasks, len(x)), len(x) + 1):
            low, high = per_task_bounds(x[:n])
            if np.all((high - low) / 2 <= target):
                return x[:n].mean(axis=0), (low, high), n, True
        return x.mean(axis=0), (low, high), len(x), False

    return {
        "fixed@min": fixed_at(lambda _: min_tasks),
        "used@min": used_at_min,
        "skewed@min": skew_shifted,
        "fixed@pool": fixed_at(lambda size: size),
        "chow-robbins": chow_robbins,
        "chow-robbins/used": chow_robbins_used,
        "anytime": lambda x: anytime(x, False),
        "anytime/fixed": lambda x: anytime(x, True),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="math")
    parser.add_argument("--slots", nargs="+", default=["planning", "action"])
    parser.add_argument("--seeds", type=int, default=40, help="generator blocks to run")
    parser.add_argument("--first-seed", type=int, default=600_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--target", type=float, default=0.16)
    parser.add_argument("--min-tasks", type=int, default=20)
    parser.add_argument("--draws", type=int, default=10_000)
    args = parser.parse_args()

    setting = Setting(args.env, "sim:weak", "sim:strong")
    agent_slots, _ = coalition_keys(setting.agent)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(f"reference episodes: {args.env}, {args.seeds} blocks of {setting.per_seed} tasks ...")
    sums = compute(setting, seeds, workers=args.workers, per_task=True)
    blocks = per_task_phi(sums, agent_slots, args.slots)
    table = load(args.env, "sim:weak", "sim:strong")
    truth = exact_values(np.array(table.vector(args.slots)), "shapley")
    sample = np.concatenate(list(blocks.values())).mean(axis=0)
    print(
        f"true phi (stored table) {np.round(truth, 4).tolist()}; "
        f"these blocks' mean {np.round(sample, 4).tolist()}"
    )

    rng = np.random.default_rng(0)
    order = list(blocks)
    table_rules = rules(args.target, args.min_tasks, setting.per_seed)
    hits: dict[str, list[FloatArray]] = {name: [] for name in table_rules}
    stops: dict[str, list[int]] = {name: [] for name in table_rules}
    on_target: dict[str, list[bool]] = {name: [] for name in table_rules}
    for _ in range(args.draws):
        block = blocks[order[rng.integers(len(order))]]
        x = block[rng.permutation(len(block))]
        for name, rule in table_rules.items():
            m, hw, n, ok = rule(x)
            low, high = hw if isinstance(hw, tuple) else (m - hw, m + hw)
            hits[name].append((low <= truth) & (truth <= high))
            stops[name].append(n)
            on_target[name].append(ok)

    print(f"\n{args.draws} draws, target +/-{args.target:g}, min tasks {args.min_tasks}")
    print(
        f"{'rule':17s} coverage  {'  '.join(f'{s:>9s}' for s in args.slots)}"
        "  tasks(median)  on target  spread/100"
    )
    cover: dict[str, float] = {}
    for name in table_rules:
        h = np.array(hits[name], dtype=float)
        per_draw = h.mean(axis=1)
        batches = per_draw[: len(per_draw) // 100 * 100].reshape(-1, 100).mean(axis=1)
        cover[name] = float(h.mean())
        slots = "  ".join(f"{v:9.3f}" for v in h.mean(axis=0))
        print(
            f"{name:17s} {h.mean():8.3f}  {slots}  {np.median(stops[name]):13.0f}"
            f"  {np.mean(on_target[name]):9.2f}  {batches.std():10.3f}"
        )
    base = cover["fixed@min"]
    print(
        "\ncoverage next to fixed@min: "
        + ", ".join(f"{k} {v:.3f} ({v / base:.3f}x)" for k, v in cover.items())
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
