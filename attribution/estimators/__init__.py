"""Shapley estimators behind one interface (``--estimator``).

exact, loo, permutation, stratified, msr, leverage, and auto.

An :class:`Estimator` knows which coalitions one task runs
(:meth:`Estimator.design`, :mod:`attribution.estimators.designs`) and how to
turn a task's rewards into that task's values ``phi_t``
(:mod:`attribution.estimators.pertask`); the estimate is their mean with the
interval over tasks. Coalitions are drawn per task and all of them run on
that task, so every estimator is paired by task, and episodes of one task
still share their LLM calls. ``auto`` is ``exact`` up to
:data:`AUTO_EXACT_MAX` slots and :data:`DEFAULT_SAMPLED` above
(docs/statistics.md says why, from ``benchmarks/many_slots.py``).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from agentbus.core.errors import UserError
from attribution.estimates import Estimates, NotEstimable
from attribution.estimators import designs, pertask
from attribution.estimators.designs import FloatArray, IntArray
from attribution.exact import shapley_values
from attribution.game import Game
from attribution.variance import per_task_interval

#: every estimator, in the order tables list them
ESTIMATORS = ("exact", "loo", "permutation", "stratified", "msr", "leverage")
#: what ``--estimator`` accepts
CHOICES = (*ESTIMATORS, "auto")
#: ``auto`` runs every coalition up to this many slots
AUTO_EXACT_MAX = 5
#: ``auto``'s estimator above AUTO_EXACT_MAX slots
DEFAULT_SAMPLED = "msr"
#: estimators that run pairs (S, N - S)
PAIRED = ("stratified", "msr", "leverage")


def resolve_name(name: str, n: int) -> str:
    """The concrete estimator ``name`` stands for with ``n`` slots (``auto`` decides)."""
    if name not in CHOICES:
        raise UserError(f"unknown estimator {name!r}; choose one of {', '.join(CHOICES)}")
    if name == "auto":
        return "exact" if n <= AUTO_EXACT_MAX else DEFAULT_SAMPLED
    return name


def default_pairs(n: int) -> int:
    """Pairs per task of the pair designs: n (2n + 2 episodes a task, as loo)."""
    return max(n, 1)


@dataclass(frozen=True)
class Estimator:
    """One estimator for a game of ``n`` slots (``pairs`` per task for pair designs)."""

    name: str
    n: int
    pairs: int = 0

    @classmethod
    def make(cls, name: str, n: int, pairs: int | None = None) -> Estimator:
        concrete = resolve_name(name, n)
        if concrete in PAIRED and n < 2:
            raise UserError(f"the {concrete} estimator needs at least two slots")
        if concrete == "loo" and n < 3:  # with 2 slots, "i alone" is "j left out"
            raise UserError(f"loo needs 3 slots or more; with {n} use exact (it is as cheap)")
        k = (pairs or default_pairs(n)) if concrete in PAIRED else 0
        if concrete in PAIRED:
            limit = sum(designs.pairs_in_size(n, int(s)) for s in designs.pair_sizes(n))
            k = min(k, limit)
        return cls(concrete, n, k)

    @property
    def kind(self) -> str:
        """The index estimated: ``shapley``, or ``loo`` (see pertask.loo_per_task)."""
        return "loo" if self.name == "loo" else "shapley"

    @property
    def proportions(self) -> FloatArray:
        if self.name == "leverage":
            return designs.leverage_proportions(self.n)
        return designs.noise_optimal_proportions(self.n)

    def episodes_per_task(self) -> int:
        n = self.n
        return {
            "exact": 1 << n,
            "loo": 2 * n + 2,
            "permutation": n + 1,
        }.get(self.name, 2 * self.pairs + 2)

    def design(self, rng: np.random.Generator, tasks: int = 1) -> IntArray:
        """Coalition masks (tasks x episodes per task) each task runs, in this layout."""
        n = self.n
        if self.name == "exact":
            return np.tile(np.arange(1 << n, dtype=np.int64), (tasks, 1))
        if self.name == "loo":
            return np.tile(designs.loo_design(n), (tasks, 1))
        if self.name == "permutation":
            return designs.permutation_design(rng, n, tasks)
        pairs = designs.pair_design(rng, n, self.pairs, self.proportions, tasks)
        return designs.pair_masks(pairs, n)

    def per_task(
        self, masks: IntArray, rewards: FloatArray, valid: FloatArray | None = None
    ) -> FloatArray:
        """phi_t (tasks x n) from rewards laid out as :meth:`design` lays out masks."""
        n = self.n
        if self.name == "exact":
            return pertask.exact_per_task(rewards, n)
        if self.name == "loo":
            return pertask.loo_per_task(
                rewards[:, 0], rewards[:, 1], rewards[:, 2 : 2 + n], rewards[:, 2 + n :]
            )
        if self.name == "permutation":
            return pertask.permutation_per_task(masks, rewards, n)
        k = self.pairs
        ok = np.ones((len(masks), k)) if valid is None else valid[:, 2 : 2 + k]
        data = pertask.PairRewards(
            masks[:, 2 : 2 + k],
            rewards[:, 0],
            rewards[:, 1],
            rewards[:, 2 : 2 + k],
            rewards[:, 2 + k :],
            ok,
        )
        if self.name == "stratified":
            return pertask.stratified_per_task(data, n, k, self.proportions)
        if self.name == "msr":
            return pertask.msr_per_task(data, n, k, self.proportions)
        return pertask.leverage_per_task(data, n)

    def from_per_task(
        self,
        phi_t: FloatArray,
        slots: tuple[str, ...],
        *,
        confidence: float = 0.95,
        episodes: int = 0,
        horizon: float | None = None,
        unit_interval: bool = True,
    ) -> Estimates:
        """The estimate and its interval over tasks from per-task values.

        The interval is :func:`attribution.variance.per_task_interval`'s, the
        exact game's paired form with its small-sample corrections
        (skewness, no spread); ``unit_interval`` is False for values that are
        not rewards in [0, 1] (cost).
        """
        t = len(phi_t)
        if t < 2:
            raise NotEstimable(
                f"not estimable yet: the interval is over tasks and {t} task(s) are complete"
            )
        values, cov, skew = per_task_interval(phi_t, unit_interval=unit_interval)
        return Estimates(
            kind=self.kind,
            slots=slots,
            values=values,
            cov=cov,
            method=f"{self.name} (per task)",
            confidence=confidence,
            df=float(t - 1),
            units=t,
            horizon=(horizon if horizon is not None else 1000.0) / self.episodes_per_task(),
            episodes=episodes,
            skew=skew,
            limits=(-1.0, 1.0) if unit_interval else None,
        )

    # -- from a game of episode records ------------------------------------

    def task_arrays(self, game: Game) -> tuple[IntArray, FloatArray, FloatArray]:
        """The game's tasks in this estimator's layout: (masks, rewards, valid), in admission order.

        A task enters once the coalitions its estimate needs all have an
        episode (a pair with a side missing is left out of its task; empty
        and full are always needed). Repeats of a coalition on a task are
        averaged.
        """
        if game.n != self.n:
            raise ValueError(f"estimator for {self.n} slots, game has {game.n}")
        tasks, masks, rewards = game.observations()
        per: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        for t, m, r in zip(tasks.tolist(), masks.tolist(), rewards.tolist(), strict=True):
            per[t][m].append(r)
        rows_m: list[list[int]] = []
        rows_r: list[list[float]] = []
        rows_v: list[list[float]] = []
        for t in sorted(per):
            cells = {m: float(np.mean(v)) for m, v in per[t].items()}
            layout = self._layout(cells)
            if layout is None:
                continue
            rows_m.append(layout[0])
            rows_r.append([cells.get(m, 0.0) for m in layout[0]])
            rows_v.append(layout[1])
        width = self.episodes_per_task()
        if not rows_m:
            empty = np.zeros((0, width))
            return empty.astype(np.int64), empty, empty
        return (np.asarray(rows_m, np.int64), np.asarray(rows_r), np.asarray(rows_v))

    def _layout(self, cells: dict[int, float]) -> tuple[list[int], list[float]] | None:
        n = self.n
        full = (1 << n) - 1
        if self.name in ("exact", "loo"):
            need = [int(m) for m in self.design(np.random.default_rng(0), 1)[0]]
            return (need, [1.0] * len(need)) if all(m in cells for m in need) else None
        if 0 not in cells or full not in cells:
            return None
        if self.name == "permutation":
            chain = sorted(cells, key=lambda m: bin(m).count("1"))
            nested = len(chain) == n + 1 and all(
                (a & b) == a and bin(b).count("1") == bin(a).count("1") + 1
                for a, b in itertools.pairwise(chain)
            )
            return (chain, [1.0] * (n + 1)) if nested else None
        smaller = sorted(
            {int(designs.canonical_pair(np.array([m]), n)[0]) for m in cells if m not in (0, full)}
        )
        pairs = [s for s in smaller if s in cells and (full ^ s) in cells][: self.pairs]
        pad = self.pairs - len(pairs)
        filler = 1  # a placeholder pair with weight 0
        side = pairs + [filler] * pad
        masks = [0, full, *side, *[full ^ s for s in side]]
        ok = [1.0, 1.0] + [1.0] * len(pairs) + [0.0] * pad
        return masks, ok + ok[2:]

    def per_task_values(self, game: Game) -> FloatArray:
        """phi_t of every complete task of ``game`` (tasks x n)."""
        masks, rewards, valid = self.task_arrays(game)
        if len(masks) == 0:
            return np.zeros((0, self.n))
        return self.per_task(masks, rewards, valid)

    def estimate(
        self, game: Game, *, confidence: float = 0.95, horizon: float | None = None
    ) -> Estimates:
        """The estimate of this estimator from a game of episode records."""
        if self.name == "exact":
            return shapley_values(game, confidence=confidence, horizon=horizon)
        phi_t = self.per_task_values(game)
        return self.from_per_task(
            phi_t,
            game.slots,
            confidence=confidence,
            episodes=game.episodes,
            horizon=horizon,
            unit_interval=game.unit_interval,
        )


__all__ = [
    "AUTO_EXACT_MAX",
    "CHOICES",
    "DEFAULT_SAMPLED",
    "ESTIMATORS",
    "Estimator",
    "resolve_name",
]
