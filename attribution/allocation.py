"""Which episodes to run next so the widest intervals shrink fastest.

Two decisions:

* **Which coalition.** Var(phi_i) = sum_S c_iS^2 sigma_S^2 / m_S, so one more
  episode of S lowers it by c_iS^2 sigma_S^2 / (m_S (m_S + 1)). The greedy
  Neyman rule runs next the S with the largest reduction per unit cost,
  summed over the slots whose interval is still wider than the target (all
  slots when none is). Repeated, this tracks the Neyman allocation
  m_S proportional to sigma_S * sqrt(sum_i c_iS^2).
* **Whole task blocks or single episodes.** When episodes of the same task
  are correlated (an easy task is easy for every coalition), running every
  coalition on the same task makes the task's difficulty cancel in phi
  (the coefficients of every slot sum to 0). While the estimated within-task
  correlation is high we therefore hand out whole blocks: every coalition on
  one fresh task, with Neyman repeats for the coalitions that weigh most.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attribution.game import FloatArray, Game

#: within-task correlation above which whole task blocks pay off
BLOCK_RHO = 0.05
#: largest number of coalitions for which a task block is practical
MAX_BLOCK = 64


def neyman_scores(
    game: Game,
    coef: FloatArray,
    *,
    slot_weights: FloatArray | None = None,
    cost: FloatArray | None = None,
    rho: float = 0.0,
) -> FloatArray:
    """Variance reduction per unit cost of one more episode, per coalition.

    Coalitions without data score +inf (they must be run before anything is
    estimable). ``rho`` scales the per-episode variance to the within-task
    part when episodes are paired by task.
    """
    m = game.counts.astype(np.float64)
    sigma2 = game.shrunk_variances() * (1.0 - max(0.0, min(rho, 0.99)))
    w = np.ones(coef.shape[0]) if slot_weights is None else np.asarray(slot_weights)
    c2 = (w[:, None] * coef * coef).sum(axis=0)
    c = np.ones_like(m) if cost is None else np.maximum(np.asarray(cost, dtype=np.float64), 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = c2 * sigma2 / (m * (m + 1.0) * c)
    return np.where(m == 0, np.inf, score)


def next_coalition(
    game: Game,
    coef: FloatArray,
    *,
    slot_weights: FloatArray | None = None,
    cost: FloatArray | None = None,
) -> int:
    """The mask the greedy Neyman rule runs next."""
    return int(np.argmax(neyman_scores(game, coef, slot_weights=slot_weights, cost=cost)))


def within_task_correlation(game: Game) -> float:
    """Intra-task correlation of residuals r - mean(S) (0 when not estimable).

    The pairwise-product estimator: the mean product of residuals of two
    different episodes of the same task over the mean squared residual.
    """
    tasks, masks, rewards = game.observations()
    if len(tasks) < 3:
        return 0.0
    means = game.means
    resid = rewards - np.nan_to_num(means[masks])
    total = np.bincount(tasks, weights=resid, minlength=game.n_tasks)
    sq = np.bincount(tasks, weights=resid * resid, minlength=game.n_tasks)
    size = np.bincount(tasks, minlength=game.n_tasks).astype(np.float64)
    pairs = float(np.sum(size * (size - 1)))
    var = float(np.mean(resid * resid))
    if pairs == 0 or var <= 0:
        return 0.0
    cross = float(np.sum(total * total - sq))
    return float(np.clip(cross / pairs / var, -1.0, 1.0))


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """Episodes for one fresh task: mask -> repeats."""

    repeats: dict[int, int]

    @property
    def episodes(self) -> int:
        return sum(self.repeats.values())


def block_repeats(
    game: Game,
    coef: FloatArray,
    *,
    max_repeats: int = 3,
    slot_weights: FloatArray | None = None,
) -> BlockPlan:
    """One task block: every coalition at least once, the heavy ones up to max_repeats.

    Within a block phi's variance is sum_S c_S^2 sigma_S^2 / k_S, so the
    Neyman repeats are k_S proportional to sigma_S * sqrt(sum_i c_iS^2),
    scaled so the heaviest coalition gets ``max_repeats``.
    """
    w = np.ones(coef.shape[0]) if slot_weights is None else np.asarray(slot_weights)
    weight = np.sqrt((w[:, None] * coef * coef).sum(axis=0))
    sigma = np.sqrt(game.shrunk_variances())
    score = weight * sigma
    top = float(score.max())
    if top <= 0:
        k = np.ones(game.size, dtype=np.int64)
    else:
        k = np.maximum(1, np.rint(max_repeats * score / top)).astype(np.int64)
    return BlockPlan({int(s): int(k[s]) for s in range(game.size)})


def planned_episodes(
    n: int, target: float, *, confidence: float = 0.95, variance: float = 0.25
) -> float:
    """Episodes a Neyman allocation needs for every half-width <= ``target``.

    Fixed before any data is seen (worst-case Bernoulli variance by default),
    so it can tune an anytime-valid sequence without breaking its validity:
    ``z^2 variance (sum_S sqrt(mean_i c_iS^2))^2 / target^2`` for exact games,
    and the size-stratified analogue ``(sum_s sqrt(a_s))^2 / n`` beyond 10 slots.
    """
    from scipy import stats

    from attribution.exact import shapley_matrix

    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    if n <= 10:
        coef = shapley_matrix(n)
        spread = float(np.sum(np.sqrt((coef * coef).mean(axis=0)))) ** 2
    else:
        s = np.arange(n + 1, dtype=np.float64)
        a = np.where(s >= 1, 1.0 / np.maximum(s, 1), 0.0) + np.where(
            s <= n - 1, 1.0 / np.maximum(n - s, 1), 0.0
        )
        spread = float(np.sum(np.sqrt(a))) ** 2 / n
    return z * z * variance * spread / (target * target)


def open_slots(halfwidths: FloatArray, target: float) -> FloatArray:
    """Slot weights for the greedy rule: the slots still above target (or all)."""
    above = np.asarray(halfwidths) > target
    return above.astype(np.float64) if above.any() else np.ones(len(above))
