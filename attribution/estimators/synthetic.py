"""Agent-like games with a known Shapley value, for the many-slot benchmark and tests.

Success of an episode is Bernoulli with probability
``sigmoid(base - d_t + sum_i a_i z_i + sum_{i<j} b_ij z_i z_j + sum c_ijk z_i z_j z_k)``:
main effects (a few strong modules, several that hardly matter), some pairwise
and a few three-way interactions, and a difficulty ``d_t ~ N(0, sd^2)`` per
task shared by every coalition run on it. The truth is the Shapley value of
the expected value function v(S) = E_d[P(success | S, d)], computed over all
2^n coalitions with Gauss-Hermite quadrature over d (error below 1e-9).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from attribution.estimators.designs import FloatArray, IntArray, bits
from attribution.exact import shapley_matrix


@dataclass(frozen=True)
class LogisticGame:
    """A logistic coalition game over ``n`` slots with task difficulty."""

    base: float
    main: FloatArray
    pairwise: dict[tuple[int, int], float] = field(default_factory=dict)
    triples: dict[tuple[int, int, int], float] = field(default_factory=dict)
    difficulty_sd: float = 1.0

    @property
    def n(self) -> int:
        return len(self.main)

    def logits(self, masks: IntArray) -> FloatArray:
        """Logit of success without the task's difficulty, for masks of any shape."""
        z = bits(masks, self.n).astype(np.float64)
        out = self.base + z @ self.main
        for (i, j), b in self.pairwise.items():
            out = out + b * z[..., i] * z[..., j]
        for (i, j, k), c in self.triples.items():
            out = out + c * z[..., i] * z[..., j] * z[..., k]
        return np.asarray(out)

    def draw(self, rng: np.random.Generator, masks: IntArray) -> FloatArray:
        """Rewards for ``masks`` (tasks x m): each row is one fresh task."""
        d = rng.normal(0.0, self.difficulty_sd, size=(masks.shape[0], 1))
        p = 1.0 / (1.0 + np.exp(-(self.logits(masks) - d)))
        return (rng.random(masks.shape) < p).astype(np.float64)

    @cached_property
    def values(self) -> FloatArray:
        """v(S) averaged over the difficulty, every mask in order."""
        nodes, weights = np.polynomial.hermite_e.hermegauss(60)
        weights = weights / weights.sum()
        logit = self.logits(np.arange(1 << self.n, dtype=np.int64))
        v = np.zeros(len(logit))
        for x, w in zip(nodes, weights, strict=True):
            v += w / (1.0 + np.exp(-(logit - self.difficulty_sd * x)))
        return v

    @cached_property
    def shapley(self) -> FloatArray:
        return np.asarray(shapley_matrix(self.n) @ self.values)


def agent_like_game(n: int, seed: int = 0) -> LogisticGame:
    """A game shaped like a real agent's: a few modules matter, most hardly do.

    About a quarter of the slots have strong main effects (0.4-1.0 on the
    logit), a quarter moderate (0.15-0.3), the rest near zero (|a| < 0.03);
    n pairwise interactions (sd 0.25) and n/4 three-way ones (sd 0.3).
    """
    rng = np.random.default_rng(seed)
    strong = max(1, n // 4)
    moderate = max(1, n // 4)
    main = np.concatenate(
        [
            rng.uniform(0.4, 1.0, strong),
            rng.uniform(0.15, 0.3, moderate),
            rng.uniform(-0.03, 0.03, n - strong - moderate),
        ]
    )
    main = main[rng.permutation(n)]
    pairs: dict[tuple[int, int], float] = {}
    while len(pairs) < n:
        i, j = sorted(rng.choice(n, 2, replace=False).tolist())
        pairs[(i, j)] = float(rng.normal(0.0, 0.25))
    triples: dict[tuple[int, int, int], float] = {}
    while len(triples) < max(1, n // 4):
        i, j, k = sorted(rng.choice(n, 3, replace=False).tolist())
        triples[(i, j, k)] = float(rng.normal(0.0, 0.3))
    return LogisticGame(-0.8, main, pairs, triples, difficulty_sd=1.0)
