"""Shapley estimators for many slots (up to 20), where 2^n coalitions are too many.

Two estimators, each with its own sampling distribution over coalitions and
standard errors from the episodes it saw:

:class:`StratifiedShapley`
    phi_i = (1/n) sum_k [E v(T + i) - E v(T)] over uniformly random T of size
    k without i. A coalition S of size s drawn uniformly among size-s sets is,
    for every slot i in S, a uniform draw of "T + i" with |T| = s - 1, and for
    every slot outside S a uniform draw of "T" with |T| = s. So every episode
    updates one stratum of *every* slot (as in stratified SVARM, Kolpaczki et
    al. 2024). Sizes are drawn with Neyman proportions (sqrt of each size's
    weight in the variance, times its reward spread).
:class:`KernelShapPaired`
    KernelSHAP's constrained regression with the exact Shapley-kernel matrix
    A and paired sampling (a coalition and its complement, ideally on the same
    task), following Covert & Lee (2021). With A exact, the estimate is linear
    in the mean of g = (z r(S) + (1 - z) r(N - S)) / 2 plus (v(N) - v(0)) / n,
    so it is unbiased, exactly efficient, and its covariance is the sample
    covariance of g over pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from attribution.estimates import Estimates, NotEstimable
from attribution.game import FloatArray, Game


def _bits(mask: int, n: int) -> np.ndarray:
    return (mask >> np.arange(n)) & 1


def _random_subset(rng: np.random.Generator, n: int, size: int) -> int:
    chosen = rng.choice(n, size=size, replace=False) if size else np.empty(0, dtype=np.int64)
    return int(np.sum(1 << chosen.astype(np.int64))) if size else 0


class _Episodes:
    """Every episode seen, as (mask, reward) lists, for the sandwich variance."""

    def __init__(self) -> None:
        self.masks: list[int] = []
        self.rewards: list[float] = []

    def add(self, mask: int, reward: float) -> None:
        self.masks.append(mask)
        self.rewards.append(float(reward))


class StratifiedShapley:
    """Size-stratified Shapley estimator where every episode updates every slot."""

    def __init__(self, slots: Sequence[str]) -> None:
        self._game = Game(slots)  # for names <-> masks only
        self.slots = self._game.slots
        self.n = len(self.slots)
        n = self.n
        self.in_n = np.zeros((n, n))
        self.in_sum = np.zeros((n, n))
        self.in_sq = np.zeros((n, n))
        self.out_n = np.zeros((n, n))
        self.out_sum = np.zeros((n, n))
        self.out_sq = np.zeros((n, n))
        self.size_n = np.zeros(n + 1)
        self.size_sum = np.zeros(n + 1)
        self.size_sq = np.zeros(n + 1)
        self._pending: list[int] = []
        self._eps = _Episodes()

    @property
    def episodes(self) -> int:
        return len(self._eps.masks)

    def mask(self, coalition: Iterable[str]) -> int:
        return self._game.mask(coalition)

    def add(self, coalition: Iterable[str], reward: float) -> None:
        self.add_mask(self.mask(coalition), reward)

    def add_mask(self, mask: int, reward: float) -> None:
        self.add_many(np.array([mask], dtype=np.int64), np.array([float(reward)]))

    def add_many(self, masks: np.ndarray, rewards: np.ndarray) -> None:
        """Record episodes; each updates one stratum of every slot."""
        masks = np.asarray(masks, dtype=np.int64)
        rewards = np.asarray(rewards, dtype=np.float64)
        n = self.n
        bits = ((masks[None, :] >> np.arange(n)[:, None]) & 1).astype(bool)  # n x E
        size = bits.sum(axis=0)
        for i in range(n):
            inside = bits[i]
            k_in = size[inside] - 1
            r_in = rewards[inside]
            np.add.at(self.in_n[i], k_in, 1.0)
            np.add.at(self.in_sum[i], k_in, r_in)
            np.add.at(self.in_sq[i], k_in, r_in * r_in)
            k_out = size[~inside]
            r_out = rewards[~inside]
            np.add.at(self.out_n[i], k_out, 1.0)
            np.add.at(self.out_sum[i], k_out, r_out)
            np.add.at(self.out_sq[i], k_out, r_out * r_out)
        np.add.at(self.size_n, size, 1.0)
        np.add.at(self.size_sum, size, rewards)
        np.add.at(self.size_sq, size, rewards * rewards)
        self._eps.masks.extend(int(m) for m in masks)
        self._eps.rewards.extend(float(r) for r in rewards)

    def _size_weights(self) -> FloatArray:
        """Per coalition size s: sum over its strata of 1/(share of size s)."""
        n = self.n
        s = np.arange(n + 1, dtype=np.float64)
        return np.where(s >= 1, 1.0 / np.maximum(s, 1), 0.0) + np.where(
            s <= n - 1, 1.0 / np.maximum(n - s, 1), 0.0
        )

    def size_probabilities(self) -> FloatArray:
        """Neyman proportions over coalition sizes 0..n."""
        a = self._size_weights()
        cnt = self.size_n
        mean = self.size_sum / np.maximum(cnt, 1)
        plug = np.maximum(self.size_sq / np.maximum(cnt, 1) - mean * mean, 0.0)
        p = (self.size_sum + 1.0) / (cnt + 2.0)
        var = np.where(cnt >= 5, np.maximum(plug, p * (1 - p)), 0.25)
        q = np.sqrt(a * var)
        return np.asarray(q / q.sum())

    def initial_design(self, rng: np.random.Generator) -> np.ndarray:
        """Coalitions that give every stratum of every slot one episode.

        For each size 1..n-1, the n cyclic windows of that length over a
        random ordering of the slots (each window is, marginally, a uniform
        subset of its size, so stratum means stay unbiased), plus the empty
        and the full coalition: 2 + n (n - 1) episodes.
        """
        n = self.n
        masks = [0, (1 << n) - 1]
        for size in range(1, n):
            order = rng.permutation(n)
            for start in range(n):
                members = order[(start + np.arange(size)) % n]
                masks.append(int(np.sum(1 << members.astype(np.int64))))
        return np.asarray(masks, dtype=np.int64)

    @property
    def ready(self) -> bool:
        """Every stratum of every slot has at least one episode."""
        return bool(np.all(self.in_n > 0) and np.all(self.out_n > 0))

    def sample(self, rng: np.random.Generator) -> int:
        """Next coalition: the initial design until every stratum has data, then Neyman."""
        if not self.ready:
            if not self._pending:
                self._pending = [int(m) for m in self.initial_design(rng)]
            return self._pending.pop()
        size = int(rng.choice(self.n + 1, p=self.size_probabilities()))
        return _random_subset(rng, self.n, size)

    def sample_many(self, rng: np.random.Generator, k: int) -> np.ndarray:
        """``k`` coalitions at once from the current size proportions.

        Faster than ``k`` calls of :meth:`sample` for batch schedulers; it
        does not steer toward empty strata (uniform subsets fill them fast).
        """
        sizes = rng.choice(self.n + 1, size=k, p=self.size_probabilities())
        ranks = rng.random((k, self.n)).argsort(axis=1).argsort(axis=1)
        chosen = ranks < sizes[:, None]
        return np.asarray((chosen * (1 << np.arange(self.n))).sum(axis=1), dtype=np.int64)

    def estimates(self, confidence: float = 0.95, horizon: float | None = None) -> Estimates:
        if np.any(self.in_n == 0) or np.any(self.out_n == 0):
            raise NotEstimable("not estimable yet: some size strata have no episodes")
        n = self.n
        mean_in = self.in_sum / self.in_n
        mean_out = self.out_sum / self.out_n
        values = (mean_in - mean_out).sum(axis=1) / n
        masks = np.asarray(self._eps.masks, dtype=np.int64)
        rewards = np.asarray(self._eps.rewards)
        bits = ((masks[None, :] >> np.arange(n)[:, None]) & 1).astype(bool)  # n x E
        size = bits.sum(axis=0)
        rows = np.arange(n)[:, None]
        k_in = np.clip(size - 1, 0, n - 1)[None, :].repeat(n, 0)
        k_out = np.clip(size, 0, n - 1)[None, :].repeat(n, 0)
        m_e = np.where(bits, self.in_n[rows, k_in], self.out_n[rows, k_out])
        mu_e = np.where(bits, mean_in[rows, k_in], mean_out[rows, k_out])
        w = np.where(bits, 1.0, -1.0) / (n * m_e)
        wr = w * (rewards[None, :] - mu_e)
        cov = wr @ wr.T
        # Shrinkage: a stratum at 0/m or m/m keeps a Laplace-smoothed variance.
        excess = np.zeros(n)
        for total, sq, cnt in (
            (self.in_sum, self.in_sq, self.in_n),
            (self.out_sum, self.out_sq, self.out_n),
        ):
            mean = total / cnt
            plug = np.maximum(sq / cnt - mean * mean, 0.0)
            p = (total + 1.0) / (cnt + 2.0)
            excess += (np.maximum(p * (1 - p) - plug, 0.0) / cnt).sum(axis=1) / n**2
        cov = cov + np.diag(excess)
        return Estimates(
            kind="shapley",
            slots=self.slots,
            values=values,
            cov=cov,
            method="stratified",
            limits=(-1.0, 1.0),
            confidence=confidence,
            units=self.episodes,
            horizon=horizon if horizon is not None else 1000.0,
            episodes=self.episodes,
        )


class KernelShapPaired:
    """KernelSHAP with paired (coalition + complement) sampling and exact A."""

    def __init__(self, slots: Sequence[str]) -> None:
        self._game = Game(slots)
        self.slots = self._game.slots
        self.n = len(self.slots)
        if self.n < 2:
            raise ValueError("KernelSHAP needs at least two slots")
        n = self.n
        sizes = np.arange(1, n)
        p = 1.0 / (sizes * (n - sizes))
        self.size_p = p / p.sum()
        off = float(np.sum(self.size_p * sizes * (sizes - 1)) / (n * (n - 1)))
        a = np.full((n, n), off)
        np.fill_diagonal(a, 0.5)
        a_inv = np.linalg.inv(a)
        one = np.ones(n)
        a1 = a_inv @ one
        self._project = a_inv - np.outer(a1, a1) / float(one @ a1)
        self.v0: list[float] = []
        self.vn: list[float] = []
        self.pairs: list[FloatArray] = []

    @property
    def episodes(self) -> int:
        return len(self.v0) + len(self.vn) + 2 * len(self.pairs)

    def sample_pair(self, rng: np.random.Generator) -> tuple[int, int]:
        """A coalition drawn from the Shapley kernel, and its complement."""
        size = int(rng.choice(np.arange(1, self.n), p=self.size_p))
        mask = _random_subset(rng, self.n, size)
        return mask, (1 << self.n) - 1 - mask

    def sample_pairs(self, rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``k`` kernel-distributed coalitions and their complements (vectorised)."""
        sizes = rng.choice(np.arange(1, self.n), size=k, p=self.size_p)
        ranks = rng.random((k, self.n)).argsort(axis=1).argsort(axis=1)
        masks = ((ranks < sizes[:, None]) * (1 << np.arange(self.n))).sum(axis=1)
        masks = np.asarray(masks, dtype=np.int64)
        return masks, (1 << self.n) - 1 - masks

    def add_pairs(self, masks: np.ndarray, rewards: np.ndarray, complement: np.ndarray) -> None:
        z = ((np.asarray(masks)[:, None] >> np.arange(self.n)) & 1).astype(np.float64)
        g = 0.5 * (z * np.asarray(rewards)[:, None] + (1 - z) * np.asarray(complement)[:, None])
        self.pairs.extend(g)

    def add_pair(self, mask: int, reward: float, complement_reward: float) -> None:
        z = _bits(mask, self.n).astype(np.float64)
        self.pairs.append(0.5 * (z * reward + (1.0 - z) * complement_reward))

    def add_empty(self, reward: float) -> None:
        self.v0.append(float(reward))

    def add_full(self, reward: float) -> None:
        self.vn.append(float(reward))

    def estimates(self, confidence: float = 0.95, horizon: float | None = None) -> Estimates:
        if len(self.v0) < 2 or len(self.vn) < 2 or len(self.pairs) < 2:
            raise NotEstimable(
                "not estimable yet: need two episodes each of the empty and full coalitions "
                "and two pairs"
            )
        n = self.n
        g = np.asarray(self.pairs)
        g_mean = g.mean(axis=0)
        v0 = float(np.mean(self.v0))
        vn = float(np.mean(self.vn))
        values = self._project @ g_mean + (vn - v0) / n
        cov_g = np.cov(g, rowvar=False, ddof=1) / len(g)
        cov = self._project @ np.atleast_2d(cov_g) @ self._project.T

        def shrunk(xs: list[float]) -> float:
            arr = np.asarray(xs)
            p = (arr.sum() + 1.0) / (len(arr) + 2.0)
            return max(p * (1 - p), float(np.var(arr, ddof=1))) / len(arr)

        cov = cov + (shrunk(self.v0) + shrunk(self.vn)) / n**2
        return Estimates(
            kind="shapley",
            slots=self.slots,
            values=np.asarray(values),
            cov=cov,
            method="kernel-paired",
            limits=(-1.0, 1.0),
            confidence=confidence,
            units=len(self.pairs),
            horizon=horizon if horizon is not None else 1000.0,
            episodes=self.episodes,
        )
