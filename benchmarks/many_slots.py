"""Shapley estimators for many modules at equal episode budgets (issue 33).

Games with a known answer:

* synthetic agent-like games (attribution.estimators.synthetic): Bernoulli
  outcomes from a logistic model with main effects (a few strong modules,
  most near zero), pairwise and three-way interactions and a difficulty per
  task; n = 6, 8, 12, 16; truth = exact Shapley value of the expected value
  function (all 2^n coalitions, quadrature over the difficulty);
* the simulator's MIRROR game (``--preset mirror``: 5 reflection slots,
  tools environment): every coalition on every task of a 400-task pool,
  stored per task in benchmarks/data/mirror_outcomes.json (made by
  ``--make-mirror RUN_DIR`` from a run of ``python -m agentbus.run --preset
  mirror --tasks 400``); truth = the exact Shapley value over the pool, and
  each replication draws its tasks from the pool.

Every estimator gets the same number of episodes: the budget of a 10-task
exhaustive run at n = 8 (2,560), and for MIRROR that of the preset's
32-task exhaustive run (1,024). Printed per game and estimator: tasks run,
mean squared error over slots and replications, coverage of the 95%
intervals (slots x replications), and MSE relative to permutation
sampling. Then the screen (``--screen loo``): how often it drops a module
whose true phi exceeds the target half-width, and its error against no
screen. The last line is the n = 12 ratio: permutation MSE over the default
sampled estimator's.

    python benchmarks/many_slots.py            # ~3 min on 2 cores
    python benchmarks/many_slots.py --reps 20  # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

# This file is named like nothing it imports, but keep its folder off the path anyway.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

# One BLAS thread: the msr refits are small solves, and threads fighting over
# two shared cores made each one 50x slower.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from attribution.estimators import DEFAULT_SAMPLED, ESTIMATORS, Estimator  # noqa: E402
from attribution.estimators.designs import FloatArray, IntArray  # noqa: E402
from attribution.estimators.synthetic import LogisticGame, agent_like_game  # noqa: E402
from attribution.exact import shapley_matrix  # noqa: E402
from attribution.screening import SCREEN_SHARE, lift_masks, screen  # noqa: E402

MIRROR_FILE = _HERE / "data" / "mirror_outcomes.json"
BUDGET = 10 * 2**8  # a 10-task exhaustive run at n = 8
MIRROR_BUDGET = 32 * 2**5  # the mirror preset's 32-task exhaustive run
SIZES = (6, 8, 12, 16)


class Pool:
    """A finite pool of tasks with every coalition's reward (deterministic per task)."""

    def __init__(self, rewards: FloatArray) -> None:
        self.rewards = rewards  # tasks x 2^n
        self.n = int(rewards.shape[1]).bit_length() - 1
        self.shapley = np.asarray(shapley_matrix(self.n) @ rewards.mean(axis=0))

    def draw(self, rng: np.random.Generator, masks: IntArray) -> FloatArray:
        rows = np.asarray(rng.integers(0, len(self.rewards), size=masks.shape[0]), np.int64)
        return np.asarray(self.rewards[rows[:, None], masks])


Source = LogisticGame | Pool


def replicate(
    source: Source, name: str, budget: int, reps: int, rng: np.random.Generator
) -> tuple[int, FloatArray, FloatArray]:
    """(tasks, squared errors reps x n, covered reps x n) of one estimator."""
    n = source.n
    est = Estimator.make(name, n)
    tasks = budget // est.episodes_per_task()
    truth = source.shapley
    err = np.zeros((reps, n))
    cov = np.zeros((reps, n))
    slots = tuple(str(i) for i in range(n))
    for r in range(reps):
        masks = est.design(rng, tasks)
        e = est.from_per_task(est.per_task(masks, source.draw(rng, masks)), slots)
        err[r] = (e.values - truth) ** 2
        cov[r] = (e.ci_low <= truth) & (truth <= e.ci_high)
    return tasks, err, cov


def table(title: str, source: Source, budget: int, reps: int, seed: int) -> dict[str, float]:
    """Print one game's rows; returns MSE per estimator."""
    n = source.n
    print(f"\n{title}: n = {n}, budget {budget:,} episodes, {reps} replications")
    print(f"{'estimator':<12} {'tasks':>6} {'MSE':>10} {'coverage':>9} {'perm/this':>10}")
    rows: dict[str, tuple[int, float, float]] = {}
    for name in ESTIMATORS:
        per_task = Estimator.make(name, n).episodes_per_task()
        if budget // per_task < 2:
            continue
        tasks, err, cov = replicate(source, name, budget, reps, np.random.default_rng(seed))
        rows[name] = (tasks, float(err.mean()), float(cov.mean()))
    perm = rows["permutation"][1]
    best = min((v[1], k) for k, v in rows.items() if k != "loo")[1]
    for name, (tasks, mse, cov_) in rows.items():
        mark = "  <- lowest error" if name == best else ""
        note = "  (loo index, not Shapley)" if name == "loo" else ""
        print(f"{name:<12} {tasks:>6} {mse:>10.2e} {cov_:>9.3f} {perm / mse:>9.2f}x{mark}{note}")
    return {k: v[1] for k, v in rows.items()}


def screened_run(
    game: LogisticGame, budget: int, h: float, rng: np.random.Generator
) -> tuple[FloatArray, np.ndarray]:
    """(estimate over all slots, dropped flags) of screen-then-game at ``budget``."""
    n = game.n
    loo = Estimator.make("loo", n)
    t1 = int(budget * SCREEN_SHARE) // loo.episodes_per_task()
    masks = loo.design(rng, t1)
    result = screen(loo.per_task(masks, game.draw(rng, masks)), tuple(map(str, range(n))), h)
    values = result.estimates.values.copy()
    dropped = np.zeros(n, dtype=bool)
    dropped[list(result.dropped)] = True
    kept = result.kept
    if kept:
        rest = budget - t1 * loo.episodes_per_task()
        est = Estimator.make("auto", len(kept))
        tasks = rest // est.episodes_per_task()
        local = est.design(rng, tasks)
        full = lift_masks(local, kept)
        phi = est.per_task(local, game.draw(rng, full)).mean(axis=0)
        values[list(kept)] = phi
    return values, dropped


def screening(reps: int, seed: int) -> None:
    """How often the screen drops a module with |phi| > h, and the error it leaves.

    MSE is over all slots (a dropped slot keeps its loo estimate) and over
    the slots the screen kept, against the default estimator on every slot
    at the same budget.
    """
    budget = 40_000
    print(
        f"\nscreen (--screen loo): budget {budget:,}, {SCREEN_SHARE:.0%} of it on the loo "
        f"screen, {reps} replications"
    )
    print(
        f"{'n':>3} {'h':>5} {'dropped':>8} {'|phi|>h dropped':>16} "
        f"{'MSE screen':>11} {'MSE none':>10} {'kept: screen':>13} {'kept: none':>11}"
    )
    for n in (12, 16):
        game = agent_like_game(n, seed=n)
        truth = game.shapley
        est = Estimator.make(DEFAULT_SAMPLED, n)
        slots = tuple(map(str, range(n)))
        for h in (0.05, 0.1):
            rng = np.random.default_rng(seed)
            big = np.abs(truth) > h
            wrong = drops = 0
            err = np.zeros((2, n))
            kept_err = np.zeros(2)
            kept_n = 0
            for _ in range(reps):
                values, dropped = screened_run(game, budget, h, rng)
                drops += int(dropped.sum())
                wrong += int((dropped & big).sum())
                masks = est.design(rng, budget // est.episodes_per_task())
                plain = est.from_per_task(est.per_task(masks, game.draw(rng, masks)), slots)
                err[0] += (values - truth) ** 2
                err[1] += (plain.values - truth) ** 2
                keep = ~dropped
                kept_err += [
                    np.sum(((values - truth) ** 2)[keep]),
                    np.sum(((plain.values - truth) ** 2)[keep]),
                ]
                kept_n += int(keep.sum())
            rate = wrong / max(reps * int(big.sum()), 1)
            mse = err.mean(axis=1) / reps
            km = kept_err / max(kept_n, 1)
            print(
                f"{n:>3} {h:>5.2f} {drops / reps:>8.1f} {rate:>16.3f} {mse[0]:>11.2e} "
                f"{mse[1]:>10.2e} {km[0]:>13.2e} {km[1]:>11.2e}"
            )


def make_mirror(run_dir: Path) -> None:
    """Store every task's reward per coalition from a full mirror run's log."""
    from attribution.collect import collect_from_log

    collector = collect_from_log(run_dir / "events.jsonl")
    (model, game), *_ = collector.games.items()
    tasks, masks, rewards = game.observations()
    table_ = np.full((game.n_tasks, game.size), np.nan)
    table_[tasks, masks] = rewards
    complete = ~np.isnan(table_).any(axis=1)
    data = {
        "source": f"python -m agentbus.run --preset mirror (test model {model}), {run_dir.name}",
        "slots": list(game.slots),
        "rewards": table_[complete].tolist(),
    }
    MIRROR_FILE.write_text(json.dumps(data) + "\n")
    print(f"wrote {MIRROR_FILE}: {int(complete.sum())} complete tasks, {game.n} slots")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200, help="replications per estimator")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--make-mirror", type=Path, metavar="RUN_DIR", help="store a mirror run")
    ap.add_argument("--screen-only", action="store_true", help="only the screening table")
    args = ap.parse_args()
    if args.make_mirror:
        make_mirror(args.make_mirror)
        return
    if args.reps < 2:
        print("many_slots: --reps must be at least 2", file=sys.stderr)
        raise SystemExit(2)
    start = time.monotonic()
    if args.screen_only:
        screening(max(args.reps // 4, 2), args.seed)
        return
    results: dict[int, dict[str, float]] = {}
    for n in SIZES:
        results[n] = table("agent-like game", agent_like_game(n, seed=n), BUDGET, args.reps, n)
    if MIRROR_FILE.exists():
        data = json.loads(MIRROR_FILE.read_text())
        pool = Pool(np.asarray(data["rewards"], dtype=np.float64))
        table(f"MIRROR ({len(pool.rewards)}-task pool)", pool, MIRROR_BUDGET, args.reps, 5)
    screening(max(args.reps // 4, 2), args.seed)
    print("\nlowest error per game (loo excluded):")
    for n, row in results.items():
        best = min((v, k) for k, v in row.items() if k != "loo")[1]
        print(f"  n = {n:>2}: {best}")
    print(f"({time.monotonic() - start:.0f} s)")
    r12 = results[12]
    print(
        f"n = 12 ratio: permutation MSE / {DEFAULT_SAMPLED} MSE = "
        f"{r12['permutation'] / r12[DEFAULT_SAMPLED]:.2f}x at {BUDGET:,} episodes"
    )


if __name__ == "__main__":
    main()
