"""Coverage of the Shapley intervals at 5-30 tasks, per slot, on real per-task outcomes.

Each replication draws n tasks from a pool of tasks the generator made and
the simulator played (tests/data/per_task/<env>.npz, written by
benchmarks/per_task_outcomes.py; see attribution/replicate.py) and builds
the game a run of n tasks would have built; its 95% intervals are checked
against the stored truth table (python -m agentbus.truth show) for reward,
and against the pool's own mean cost for the Shapley value of cost (the
pool is the large-run reference; the draws are from it).

Methods compared (attribution.variance.linear_covariance):

* ``paired``: what runs use (task-clustered, t at T-1 df, raised to the
  Jeffreys floor of binary coalitions that went 0/m or m/m);
* ``paired-nofloor``: the same without the floor;
* ``independent``: the form runs used below 20 tasks before;
* ``add-laplace``: the paired form with the Laplace-smoothed excess (one
  pseudo-episode for graded rewards) added on top, as runs used from 20
  tasks before; ``max-laplace``: raised to it instead.

    python benchmarks/interval_coverage.py --reps 2000

prints coverage per environment, method, task count and slot of the
pool's own Shapley values (the exact truth of the world the draws come
from), the Wilson interval of the pooled coverage, the mean half-width,
and the pooled coverage of the stored truth table's values.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

# This file is named like packages it measures; keep its folder off the path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import numpy as np  # noqa: E402

from agentbus.sim.truth.table import load  # noqa: E402
from attribution.estimates import Estimates  # noqa: E402
from attribution.exact import shapley_matrix, shapley_values  # noqa: E402
from attribution.game import Game  # noqa: E402
from attribution.replicate import (  # noqa: E402
    intervals,
    load_pool,
    shapley_by_permutations,
    wilson,
)

POOLS = _HERE.parent / "tests" / "data" / "per_task"


def nofloor(game: Game) -> Estimates:
    game.unit_interval = False  # the floor is off for games outside [0, 1]
    return shapley_values(game)


def floor_variance(game: Game, coef: np.ndarray, jeffreys: bool) -> np.ndarray:
    """sum_S c_S^2 (smoothed Bernoulli - plug-in variance) / m_S per slot."""
    m = game.counts.astype(np.float64)
    a, b = (0.5, 1.0) if jeffreys else (1.0, 2.0)
    p = (game.sums + a) / (m + b)
    excess = np.maximum(p * (1 - p) - game.ml_variances(), 0.0)
    if np.any(game._nonbinary > 0):  # graded: one pseudo-episode (as Game.shrunk_variances)
        excess = np.where(game._nonbinary > 0, p * (1 - p) / m, excess)
    return np.asarray((coef**2 * (excess / m)).sum(axis=1))


def candidate(scale: float, combine: str, jeffreys: bool) -> Callable[[Game], Estimates]:
    def estimate(game: Game) -> Estimates:
        base = nofloor(game)
        floor = scale * floor_variance(game, shapley_matrix(game.n), jeffreys)
        cov = base.cov.copy()
        diag = np.diag(cov)
        new = diag + floor if combine == "add" else np.maximum(diag, floor)
        cov[np.diag_indices_from(cov)] = new
        return replace(base, cov=cov)

    return estimate


METHODS: dict[str, Callable[[Game], Estimates]] = {
    "paired": lambda g: shapley_values(g),
    "paired-nofloor": nofloor,
    "independent": lambda g: shapley_values(g, method="independent"),
    "add-laplace": candidate(1.0, "add", False),
    "max-laplace": candidate(1.0, "max", False),
}


def show(
    label: str, n: int, low: np.ndarray, high: np.ndarray, truth: np.ndarray, table: Any
) -> None:
    """One row: per-slot coverage of ``truth`` (the pool's), pooled with its Wilson interval."""
    hits = (low <= truth) & (truth <= high)
    per_slot = "  ".join(f"{v:10.3f}" for v in hits.mean(axis=0))
    lo, hi = wilson(int(hits.sum()), hits.size)
    width = float(((high - low) / 2).mean())
    against = ""
    if table is not None:
        against = f"  {((low <= table) & (table <= high)).mean():.3f}"
    print(
        f"{label:15s} {n:5d}  {per_slot}  {hits.mean():6.3f}  [{lo:.3f}, {hi:.3f}]  "
        f"{width:.4g}{against}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=sorted(p.stem for p in POOLS.glob("*.npz")))
    parser.add_argument("--tasks", nargs="+", type=int, default=[5, 10, 15, 30])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--cost", action="store_true", help="also the Shapley value of cost")
    args = parser.parse_args()
    for env in args.envs:
        pool = load_pool(POOLS / f"{env}.npz")
        table = load(env, "sim:weak", "sim:strong")
        values = {k: float(v.mean) for k, v in table.values.items()}
        truth = shapley_by_permutations(values, pool.slots)
        own = shapley_by_permutations(pool.mean_game(), pool.slots)
        print(
            f"\n{env}: pool of {pool.tasks} tasks; true phi {np.round(truth, 3).tolist()}, "
            f"pool's phi {np.round(own, 3).tolist()}"
        )
        header = "  ".join(f"{s:>10s}" for s in pool.slots)
        print(
            f"{'method':15s} {'tasks':>5s}  {header}  {'all':>6s}  [95% Wilson]    "
            "mean hw  all vs table"
        )
        for method in args.methods:
            for n in args.tasks:
                low, high = intervals(pool, n, args.reps, seed=1000 + n, estimator=METHODS[method])
                show(method, n, low, high, own, truth)
        if args.cost:
            cost_truth = shapley_by_permutations(pool.mean_game("cost"), pool.slots)
            for n in args.tasks:
                low, high = intervals(pool, n, args.reps, seed=2000 + n, what="cost")
                show("cost (paired)", n, low, high, cost_truth, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
