"""Coverage of the Shapley intervals at 5-30 tasks, per slot, on real per-task outcomes.

Each replication draws n tasks from a pool of tasks the generator made and
the simulator played (tests/data/per_task/<env>.npz, written by
benchmarks/per_task_outcomes.py; see attribution/replicate.py). A run of n
pool tasks is a complete block design, where the exact game's paired
interval is the interval over the tasks' own Shapley values, so every
method here is computed for all replications at once from those values
(tests/attribution/test_interval_coverage.py checks that the method runs use gives the
bounds a game gives). The truth is the pool's own Shapley value (the exact
truth of the world the draws come from); for reward the last column is the
pooled coverage of the stored truth table's values.

Methods (per slot, d_t = a task's Shapley value, T tasks):

* ``used``: the t interval at T-1 df, each side widened to Hall's (1992)
  skewness-removing transformation where that is wider (rewards: the
  skewness shrunk by half its standard error), variance floor only where
  no task differed (attribution.variance);
* ``t``: the t interval alone;
* ``hall``: Hall's interval alone (both sides moved by the skewness);
* ``union-full``: as ``used`` without shrinking the rewards' skewness;
* ``coalition-floor``: the t interval with each variance raised to the
  Jeffreys Bernoulli variances of the 0/m and m/m coalitions, summed as if
  coalitions were independent (what runs used before).

    python benchmarks/interval_coverage.py --reps 2000 --cost

prints, per environment, method and task count: coverage per slot, pooled
with its Wilson interval, the mean half-width, and for reward the pooled
coverage of the stored table's values.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

# This file is named like packages it measures; keep its folder off the path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import numpy as np  # noqa: E402
from scipy import special  # noqa: E402

from agentbus.sim.truth.table import load  # noqa: E402
from attribution.exact import shapley_matrix  # noqa: E402
from attribution.replicate import (  # noqa: E402
    Pool,
    draw_rows,
    load_pool,
    per_task_shapley,
    shapley_by_permutations,
    wilson,
)
from attribution.variance import (  # noqa: E402
    per_task_bounds,
    skewed_bounds,
    task_skewness,
)

POOLS = _HERE.parent / "tests" / "data" / "per_task"

Bounds = tuple[np.ndarray, np.ndarray]
#: (pool, rows reps x T, what) -> (low, high), each reps x slots
Method = Callable[[Pool, np.ndarray, str], Bounds]


def _parts(pool: Pool, rows: np.ndarray, what: str) -> tuple[np.ndarray, int, float]:
    x = per_task_shapley(pool, what)[rows]
    t = rows.shape[1]
    return x, t, float(special.stdtrit(t - 1, 0.975))


def used(pool: Pool, rows: np.ndarray, what: str) -> Bounds:
    return per_task_bounds(per_task_shapley(pool, what)[rows], unit_interval=what == "reward")


def plain_t(pool: Pool, rows: np.ndarray, what: str) -> Bounds:
    x, t, q = _parts(pool, rows, what)
    se = x.std(axis=1, ddof=1) / np.sqrt(t)
    return skewed_bounds(x.mean(axis=1), se, q, None, t)


def hall_alone(pool: Pool, rows: np.ndarray, what: str) -> Bounds:
    x, t, q = _parts(pool, rows, what)
    mean, se = x.mean(axis=1), x.std(axis=1, ddof=1) / np.sqrt(t)
    a = task_skewness(x, unit_interval=False) / (3.0 * np.sqrt(t))
    flat = np.abs(a) < 1e-9
    safe = np.where(flat, 1.0, a)

    def inverse(y: float) -> np.ndarray:
        return np.where(flat, y - a / 2, (np.cbrt(1 + 3 * safe * (y - a / 2)) - 1) / safe)

    return mean - se * inverse(q), mean - se * inverse(-q)


def union_full(pool: Pool, rows: np.ndarray, what: str) -> Bounds:
    return per_task_bounds(per_task_shapley(pool, what)[rows], unit_interval=False)


def coalition_floor(pool: Pool, rows: np.ndarray, what: str) -> Bounds:
    """The former method: variances raised to independent Jeffreys Bernoulli ones."""
    x, t, q = _parts(pool, rows, what)
    var = x.var(axis=1, ddof=1) / t
    if what == "reward":
        full = np.zeros((pool.tasks, 1 << len(pool.slots)))
        full[:, pool.masks] = pool.rewards
        r = full[rows]  # reps x T x 2^n
        p = (r.sum(axis=1) + 0.5) / (t + 1.0)
        excess = np.maximum(p * (1 - p) - r.var(axis=1), 0.0)
        graded = ((r != 0) & (r != 1)).any(axis=1)
        excess = np.where(graded, 0.0, excess) / t
        c = shapley_matrix(len(pool.slots))
        var = np.maximum(var, excess @ (c * c).T)
    return skewed_bounds(x.mean(axis=1), np.sqrt(var), q, None, t)


METHODS: dict[str, Method] = {
    "used": used,
    "t": plain_t,
    "hall": hall_alone,
    "union-full": union_full,
    "coalition-floor": coalition_floor,
}


def show(
    label: str, n: int, low: np.ndarray, high: np.ndarray, truth: np.ndarray, table: object
) -> None:
    """One row: per-slot coverage of ``truth`` (the pool's), pooled with its Wilson interval."""
    hits = (low <= truth) & (truth <= high)
    per_slot = "  ".join(f"{v:10.3f}" for v in hits.mean(axis=0))
    lo, hi = wilson(int(hits.sum()), hits.size)
    width = float(((high - low) / 2).mean())
    against = ""
    if isinstance(table, np.ndarray):
        against = f"  {((low <= table) & (table <= high)).mean():.3f}"
    print(
        f"{label:16s} {n:5d}  {per_slot}  {hits.mean():6.3f}  [{lo:.3f}, {hi:.3f}]  "
        f"{width:.4g}{against}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=sorted(p.stem for p in POOLS.glob("*.npz")))
    parser.add_argument("--tasks", nargs="+", type=int, default=[5, 10, 15, 30])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--cost", action="store_true", help="also the Shapley value of cost")
    args = parser.parse_args()
    for env in args.envs:
        pool = load_pool(POOLS / f"{env}.npz")
        table = load(env, "sim:weak", "sim:strong")
        values = {k: float(v.mean) for k, v in table.values.items()}
        truth = shapley_by_permutations(values, pool.slots)
        header = "  ".join(f"{s:>10s}" for s in pool.slots)
        for what in ("reward", "cost") if args.cost else ("reward",):
            own = shapley_by_permutations(pool.mean_game(what), pool.slots)
            print(
                f"\n{env} {what}: pool of {pool.tasks} tasks; pool's phi "
                f"{np.round(own, 4).tolist()}"
                + (f", table's {np.round(truth, 3).tolist()}" if what == "reward" else "")
            )
            tail = "  all vs table" if what == "reward" else ""
            print(
                f"{'method':16s} {'tasks':>5s}  {header}  {'all':>6s}  [95% Wilson]"
                f"    mean hw{tail}"
            )
            for method in args.methods:
                for n in args.tasks:
                    seed = (1000 if what == "reward" else 2000) + n  # the test's draws
                    rows = draw_rows(pool, np.random.default_rng(seed), n, args.reps)
                    low, high = METHODS[method](pool, rows, what)
                    show(method, n, low, high, own, truth if what == "reward" else None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
