"""What clipping the reward intervals into [-1, 1] changes: bounds moved, coverage, width.

A Shapley value of a reward in [0, 1] lies in [-1, 1]; the intervals are
clipped into that range (attribution.estimates.Estimates.limits,
attribution.variance.per_task_bounds). For 2,000 resampled runs of 2, 3, 5
and 10 stored tasks per environment (tests/data/per_task), this prints the
share of bounds that lay outside the range before clipping, the coverage of
the pool's Shapley value with and without clipping (always equal: the
truth is inside the range) and the mean full width both ways. About 10 s.

    python benchmarks/interval_range.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attribution.replicate import draw_rows, load_pool, per_task_shapley, shapley_by_permutations
from attribution.variance import per_task_bounds

POOLS = Path(__file__).resolve().parents[1] / "tests" / "data" / "per_task"


def main() -> None:
    print("env        tasks  outside  coverage (unclipped)  width (unclipped)")
    for env in ("math", "navigation", "tools"):
        pool = load_pool(POOLS / f"{env}.npz")
        phi = per_task_shapley(pool, "reward")
        truth = shapley_by_permutations(pool.mean_game(), pool.slots)
        for n in (2, 3, 5, 10):
            rows = draw_rows(pool, np.random.default_rng(100 + n), n, 2000)
            lo, hi = per_task_bounds(phi[rows])
            rlo, rhi = per_task_bounds(phi[rows], clip=False)
            out = ((rlo < -1).sum() + (rhi > 1).sum()) / (2 * rlo.size)
            cov = ((lo <= truth) & (truth <= hi)).mean()
            rcov = ((rlo <= truth) & (truth <= rhi)).mean()
            print(
                f"{env:10s} {n:5d}  {out:7.4f}  {cov:.3f} ({rcov:.3f})"
                f"         {(hi - lo).mean():.3f} ({(rhi - rlo).mean():.3f})"
            )


if __name__ == "__main__":
    main()
