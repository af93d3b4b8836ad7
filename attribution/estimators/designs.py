"""Which coalitions one task runs, per estimator.

Every estimator here is *per task*: each task draws its own coalitions from a
known distribution and every one of them runs on that task, so the estimate
of a task, ``phi_t``, is unbiased for that task's Shapley values and the
tasks pair themselves (an easy task is easy for all its coalitions, and the
difference between coalitions is what ``phi_t`` keeps). The interval is then
over tasks (:mod:`attribution.estimators.pertask`).

Designs (``n`` slots, masks as bit sets, ``full = 2^n - 1``):

``exact``        all 2^n coalitions.
``loo``          empty, full, every single slot on its own (leave-one-in) and
                 every slot left out of the full coalition (leave-one-out):
                 2n + 2 coalitions.
``permutation``  one random order of the slots and its chain of prefixes,
                 empty to full: n + 1 coalitions.
``pairs``        empty, full, and ``k`` pairs (S, N - S) whose smaller side
                 has size s in 1..n/2. Sizes are spread over the task by
                 systematic sampling with proportions ``pi`` (known in
                 advance, so the estimate can weight by them), and within a
                 size the pairs are drawn without replacement: 2k + 2
                 coalitions, none repeated.
"""

from __future__ import annotations

from math import comb

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def popcount(masks: IntArray) -> IntArray:
    """Number of set bits of each mask (any shape)."""
    m = np.asarray(masks, dtype=np.int64)
    out = np.zeros(m.shape, dtype=np.int64)
    for b in range(int(m.max(initial=0)).bit_length()):
        out += (m >> b) & 1
    return out


def bits(masks: IntArray, n: int) -> NDArray[np.bool_]:
    """Membership array: ``bits(m, n)[..., i]`` is True when slot i is in m."""
    m = np.asarray(masks, dtype=np.int64)
    return ((m[..., None] >> np.arange(n)) & 1).astype(bool)


def pair_sizes(n: int) -> IntArray:
    """Sizes of the smaller side of a pair: 1 .. n // 2."""
    return np.arange(1, n // 2 + 1, dtype=np.int64)


def pairs_in_size(n: int, s: int) -> int:
    """How many distinct pairs (S, N - S) have a smaller side of size ``s``."""
    return comb(n, s) // (2 if 2 * s == n else 1)


def half_weight(n: int) -> FloatArray:
    """g_s: 1, or 1/2 for s = n/2 (both sides of such a pair are in the same size)."""
    s = pair_sizes(n)
    return np.where(2 * s == n, 0.5, 1.0)


def noise_optimal_proportions(n: int) -> FloatArray:
    """Size proportions that minimise the weighted-difference estimator's noise.

    A pair of size s contributes a_i (r_S - r_{N-S}) with E[a_i^2] =
    1/(s (n - s)); with the reward noise the same for every coalition the
    variance is sum_s g_s^2 / (pi_s s (n - s)) / k, smallest at
    pi_s proportional to g_s / sqrt(s (n - s)).
    """
    s = pair_sizes(n).astype(np.float64)
    q = half_weight(n) / np.sqrt(s * (n - s))
    return np.asarray(q / q.sum())


def leverage_proportions(n: int) -> FloatArray:
    """Leverage SHAP's sampling: every coalition size 1..n-1 gets the same mass."""
    s = pair_sizes(n)
    q = np.where(2 * s == n, 1.0, 2.0)
    return np.asarray(q / q.sum())


def systematic_sizes(rng: np.random.Generator, pi: FloatArray, k: int, tasks: int) -> IntArray:
    """Per task, ``k`` stratum indices with E[count of s] = k pi_s (systematic sampling)."""
    cum = np.concatenate([[0.0], np.cumsum(pi) * k])
    cum[-1] = float(k)
    start = rng.random((tasks, 1))
    points = start + np.arange(k)[None, :]
    idx = np.searchsorted(cum, points, side="right") - 1
    return np.asarray(np.clip(idx, 0, len(pi) - 1), dtype=np.int64)


def random_subsets(rng: np.random.Generator, n: int, sizes: IntArray) -> IntArray:
    """A uniform subset of each given size (vectorised over any shape)."""
    shape = np.shape(sizes)
    flat = np.asarray(sizes, dtype=np.int64).reshape(-1)
    ranks = rng.random((len(flat), n)).argsort(axis=1).argsort(axis=1)
    chosen = ranks < flat[:, None]
    masks = (chosen * (1 << np.arange(n, dtype=np.int64))).sum(axis=1)
    return np.asarray(masks, dtype=np.int64).reshape(shape)


def canonical_pair(masks: IntArray, n: int) -> IntArray:
    """The smaller side of each pair (for s = n/2, the smaller mask of the two)."""
    full = (1 << n) - 1
    m = np.asarray(masks, dtype=np.int64)
    c = full ^ m
    pm, pc = popcount(m), popcount(c)
    return np.asarray(np.where((pm < pc) | ((pm == pc) & (m < c)), m, c), dtype=np.int64)


def pair_design(rng: np.random.Generator, n: int, k: int, pi: FloatArray, tasks: int) -> IntArray:
    """Smaller sides (tasks x k) of the pairs each task runs, no pair twice on a task."""
    sizes = pair_sizes(n)[systematic_sizes(rng, pi, k, tasks)]
    for s in np.unique(sizes):
        if np.max(np.sum(sizes == s, axis=1)) > pairs_in_size(n, int(s)):
            raise ValueError(f"{k} pairs per task ask for more size-{s} pairs than {n} slots have")
    out = canonical_pair(random_subsets(rng, n, sizes), n)
    for _ in range(200):  # redraw the few pairs that repeat one already on their task
        srt = np.sort(out, axis=1)
        dup_rows = np.flatnonzero(np.any(srt[:, 1:] == srt[:, :-1], axis=1))
        if len(dup_rows) == 0:
            return out
        for row in dup_rows:
            seen: set[int] = set()
            for j in range(k):
                while int(out[row, j]) in seen:
                    fresh = random_subsets(rng, n, np.array([sizes[row, j]]))
                    out[row, j] = canonical_pair(fresh, n)[0]
                seen.add(int(out[row, j]))
    return out


def permutation_design(rng: np.random.Generator, n: int, tasks: int) -> IntArray:
    """Per task the chain of one random order: masks of sizes 0..n (tasks x (n + 1))."""
    order = rng.random((tasks, n)).argsort(axis=1)
    steps = (1 << order).astype(np.int64)
    chain = np.concatenate([np.zeros((tasks, 1), np.int64), np.cumsum(steps, axis=1)], axis=1)
    return np.asarray(chain, dtype=np.int64)


def loo_design(n: int) -> IntArray:
    """Empty, full, each slot alone, each slot left out: the same 2n + 2 on every task."""
    full = (1 << n) - 1
    single = 1 << np.arange(n, dtype=np.int64)
    return np.concatenate([[0, full], single, full ^ single]).astype(np.int64)


def pair_masks(pairs: IntArray, n: int) -> IntArray:
    """Every coalition a pair design runs on each task: empty, full, S and N - S."""
    full = (1 << n) - 1
    p = np.asarray(pairs, dtype=np.int64)
    fixed = np.broadcast_to(np.array([0, full], np.int64), (len(p), 2))
    return np.concatenate([fixed, p, full ^ p], axis=1)
