"""Per-task estimates phi_t and the interval over tasks.

Each estimator turns one task's rewards into ``phi_t`` (one value per slot);
the estimate is their mean and its covariance the sample covariance of the
``phi_t`` over T tasks divided by T, with a t quantile on T - 1 degrees of
freedom. That is the paired (task-as-unit) interval the exact game uses, for
any design: the spread between tasks holds the reward noise, the coalitions a
task happened to draw and the tasks' own differences, so nothing is left out.

Pair designs (``stratified``, ``msr``, ``leverage``; see
:mod:`attribution.estimators.designs`) share one identity: for a pair
(S, N - S) whose smaller side S has size s, the Shapley weights of the two
sides are equal and opposite, and over uniform S of size s

    E[a_i(S) (v(S) - v(N - S))] = the share of phi_i carried by sizes s and n - s,

with a_i(S) = 1/s when i is in S and -1/(n - s) otherwise (halved for
s = n/2, where both sides have the same size). So a task's phi is
(v(N) - v(0))/n plus the pairs' a_i-weighted differences, each divided by its
expected count k pi_s (Horvitz-Thompson): unbiased, and a task-level
constant (difficulty) cancels inside every pair.

``stratified`` is that estimator as it stands. ``msr`` (regression-adjusted
Monte Carlo, after Witter, Liu and Musco, arXiv 2506.11849) first fits a
model f of the value function whose Shapley values are known exactly (here:
ridge regression on slot indicators and their pairwise products, phi_i(f) =
a_i + sum_j b_ij / 2) and applies the same unbiased estimator to the
residual r - f only; f for task t is fitted on the tasks before it (in the
order they were admitted), so phi_t stays unbiased and the phi_t are
martingale differences, which is what the t interval needs. ``leverage``
(Leverage SHAP, Musco and Witter, arXiv 2410.01917) samples sizes by their
leverage scores (every size 1..n-1 equally) and solves the Shapley kernel
regression with the efficiency constraint, pooled over tasks; its per-task
values are the regression's influence values (cluster-robust by task).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from attribution.estimators.designs import (
    FloatArray,
    IntArray,
    bits,
    half_weight,
    popcount,
)
from attribution.exact import shapley_matrix

#: ridge penalty of the msr model (rewards are in [0, 1], features 0/1)
RIDGE = 1.0


def exact_per_task(rewards: FloatArray, n: int) -> FloatArray:
    """phi_t from every coalition of every task (tasks x 2^n, masks in order)."""
    return np.asarray(rewards @ shapley_matrix(n).T)


def loo_per_task(
    r0: FloatArray, rn: FloatArray, single: FloatArray, minus: FloatArray
) -> FloatArray:
    """Mean of leave-one-in (v(i) - v(0)) and leave-one-out (v(N) - v(N - i)).

    Exactly the Shapley value when no interaction involves three or more
    slots; otherwise it is its own index (what "Agents that Matter" uses).
    """
    return np.asarray(0.5 * ((single - r0[:, None]) + (rn[:, None] - minus)))


def permutation_per_task(chain: IntArray, rewards: FloatArray, n: int) -> FloatArray:
    """Marginal contributions along each task's random order (chain: tasks x (n + 1))."""
    diff = rewards[:, 1:] - rewards[:, :-1]
    added = chain[:, 1:] ^ chain[:, :-1]
    slot = np.log2(added).round().astype(np.int64)
    out = np.zeros((len(chain), n))
    np.put_along_axis(out, slot, diff, axis=1)
    return out


def _pair_weights(pairs: IntArray, n: int, k: int, pi: FloatArray) -> FloatArray:
    """a_i(S) g_s / (k pi_s) per task, pair and slot (tasks x k x n)."""
    s = popcount(pairs)
    inside = bits(pairs, n)
    a = np.where(inside, 1.0 / s[..., None], -1.0 / (n - s)[..., None])
    scale = half_weight(n)[s - 1] / (k * pi[s - 1])
    return np.asarray(a * scale[..., None])


class PairRewards(NamedTuple):
    """What a pair design measured, per task: the input of the pair estimators."""

    #: the smaller side S of each pair (tasks x k coalition masks)
    pairs: IntArray
    #: r(0) and r(N) (tasks)
    r0: FloatArray
    rn: FloatArray
    #: r(S) and r(N - S) of each pair (tasks x k)
    rs: FloatArray
    rc: FloatArray
    #: each pair's weight: 1, or 0 for a placeholder pair a task could not fill (tasks x k)
    valid: FloatArray


def stratified_per_task(data: PairRewards, n: int, k: int, pi: FloatArray) -> FloatArray:
    """Horvitz-Thompson phi_t of a pair design (see the module docstring)."""
    pairs, r0, rn, rs, rc, valid = data
    w = _pair_weights(pairs, n, k, pi)
    d = (rs - rc) * valid
    return np.asarray(((rn - r0) / n)[:, None] + np.einsum("tkn,tk->tn", w, d))


def quadratic_features(masks: IntArray, n: int) -> FloatArray:
    """[1, z_i, z_i z_j (i < j)] of each mask (rows x (1 + n + n(n-1)/2))."""
    z = bits(masks, n).reshape(-1, n).astype(np.float64)
    iu, ju = np.triu_indices(n, 1)
    return np.concatenate([np.ones((len(z), 1)), z, z[:, iu] * z[:, ju]], axis=1)


def quadratic_shapley(coef: FloatArray, n: int) -> FloatArray:
    """Shapley values of f(S) = c0 + sum a_i z_i + sum b_ij z_i z_j: a_i + sum_j b_ij / 2."""
    a = coef[1 : n + 1].copy()
    iu, ju = np.triu_indices(n, 1)
    b = coef[n + 1 :]
    np.add.at(a, iu, b / 2)
    np.add.at(a, ju, b / 2)
    return np.asarray(a)


def refit_points(tasks: int) -> list[int]:
    """Task counts after which the msr model is refitted: 2, 4, 8, 16, 32, then every 32."""
    pts = [p for p in (2, 4, 8, 16, 32) if p < tasks]
    pts += list(range(64, tasks, 32))
    return pts


def msr_per_task(data: PairRewards, n: int, k: int, pi: FloatArray) -> FloatArray:
    """Regression-adjusted phi_t; task t's model is fitted on tasks 0..t-1 only."""
    pairs, r0, rn, rs, rc, valid = data
    tasks = len(pairs)
    full = (1 << n) - 1
    masks = np.concatenate(
        [np.zeros((tasks, 1), np.int64), np.full((tasks, 1), full, np.int64), pairs, full ^ pairs],
        axis=1,
    )
    rewards = np.concatenate([r0[:, None], rn[:, None], rs, rc], axis=1)
    weight = np.concatenate([np.ones((tasks, 2)), valid, valid], axis=1)
    x = quadratic_features(masks, n).reshape(tasks, masks.shape[1], -1)
    p = x.shape[2]
    xtx = np.zeros((p, p))
    xty = np.zeros(p)
    penalty = RIDGE * np.eye(p)
    penalty[0, 0] = 1e-9
    out = np.zeros((tasks, n))
    bounds = [0, *refit_points(tasks), tasks]
    coef: np.ndarray = np.zeros(p)
    for lo, hi in itertools.pairwise(bounds):
        if lo > 0:
            coef = np.linalg.solve(xtx + penalty, xty)
        fitted = x[lo:hi] @ coef
        resid = rewards[lo:hi] - fitted
        e0, en = resid[:, 0], resid[:, 1]
        es, ec = resid[:, 2 : 2 + k], resid[:, 2 + k :]
        residual = PairRewards(pairs[lo:hi], e0, en, es, ec, valid[lo:hi])
        out[lo:hi] = quadratic_shapley(coef, n)[None, :] + stratified_per_task(residual, n, k, pi)
        xs = x[lo:hi].reshape(-1, p) * weight[lo:hi].reshape(-1, 1)
        xtx += xs.T @ xs
        xty += xs.T @ (rewards[lo:hi].reshape(-1) * weight[lo:hi].reshape(-1))
    return out


def leverage_per_task(data: PairRewards, n: int) -> FloatArray:
    """Influence values of the pooled Leverage SHAP regression (their mean is the estimate).

    Rows are both sides of every pair, centred features z - |S|/n (the
    efficiency constraint projected out), target r(S) - r(0) - |S|/n
    (r(N) - r(0)) on the row's own task, weight 1/(|S| (n - |S|)): the Shapley
    kernel over the leverage-score sampling probabilities.
    """
    pairs, r0, rn, rs, rc, valid = data
    tasks, _k = pairs.shape
    full = (1 << n) - 1
    masks = np.concatenate([pairs, full ^ pairs], axis=1)  # tasks x 2k
    r = np.concatenate([rs, rc], axis=1)
    ok = np.concatenate([valid, valid], axis=1)
    u = popcount(masks).astype(np.float64)
    z = bits(masks, n).astype(np.float64) - (u / n)[..., None]
    delta = rn - r0
    y = r - r0[:, None] - (u / n) * delta[:, None]
    w = ok / (u * (n - u))
    g = np.einsum("tk,tki,tkj->ij", w, z, z) / tasks
    b = np.einsum("tk,tki,tk->i", w, z, y) / tasks
    # g has the all-ones null space (exactly in theory, ~1e-14 in floats): invert on its complement
    ones = np.full((n, n), 1.0 / n)
    g_inv = np.linalg.inv(g + ones) - ones
    x = g_inv @ b
    resid = y - np.einsum("tki,i->tk", z, x)
    influence = np.einsum("tk,tki,tk->ti", w, z, resid) @ g_inv.T
    phi = x + delta.mean() / n
    return np.asarray(phi[None, :] + influence + ((delta - delta.mean()) / n)[:, None])
