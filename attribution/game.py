"""A coalition game built from noisy episode rewards.

Each episode runs one *coalition* S (the slots that use the test
implementation) on one task and yields a reward. The game keeps, per
coalition, the count, sum and sum of squares (so means and variances update in
O(1) per episode) and, per episode, the task it ran on (so estimators can pair
coalitions by task). Coalitions are held as bit masks: bit i set means slot i
uses the test implementation. Nothing is ever filled in: a coalition without
data has count 0, and the estimators refuse to treat it as a 0 reward.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from agentbus.core.coalitions import coalition_key as kernel_coalition_key
from agentbus.core.errors import UserError

MAX_SLOTS = 20

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class Game:
    """Per-coalition and per-task reward statistics over ``slots``."""

    def __init__(self, slots: Sequence[str], *, unit_interval: bool = True) -> None:
        names = [str(s) for s in slots]
        if not names:
            raise UserError("a game needs at least one slot")
        if len(names) > MAX_SLOTS:
            raise UserError(f"at most {MAX_SLOTS} slots are supported, got {len(names)}")
        if len(set(names)) != len(names):
            raise UserError(f"slot names must be unique, got {names}")
        for name in names:
            if not name or "+" in name:
                raise UserError(f"slot name {name!r} must be non-empty and contain no '+'")
        self.slots: tuple[str, ...] = tuple(names)
        #: rewards lie in [0, 1], so a Bernoulli bound may stand in for a variance that
        #: a handful of episodes cannot show; False for other quantities (cost in USD)
        self.unit_interval = unit_interval
        self.n = len(names)
        self.size = 1 << self.n
        self._index = {name: i for i, name in enumerate(names)}
        self._count = np.zeros(self.size, dtype=np.int64)
        self._sum = np.zeros(self.size, dtype=np.float64)
        self._sumsq = np.zeros(self.size, dtype=np.float64)
        self._nonbinary = np.zeros(self.size, dtype=np.int64)
        self._task_ids: dict[str, int] = {}
        self._cap = 1024
        self._obs_task = np.zeros(self._cap, dtype=np.int64)
        self._obs_mask = np.zeros(self._cap, dtype=np.int64)
        self._obs_reward = np.zeros(self._cap, dtype=np.float64)
        self._n_obs = 0

    # -- coalitions ---------------------------------------------------------

    def mask(self, coalition: Iterable[str]) -> int:
        """Bit mask of a coalition given by slot names (unknown names are errors)."""
        m = 0
        for name in coalition:
            i = self._index.get(name)
            if i is None:
                raise UserError(f"unknown slot {name!r}; slots are {', '.join(self.slots)}")
            m |= 1 << i
        return m

    def members(self, mask: int) -> frozenset[str]:
        return frozenset(self.slots[i] for i in range(self.n) if mask >> i & 1)

    def key(self, mask: int) -> str:
        """The results-file key: member names in slot order joined by '+'."""
        return "+".join(self.slots[i] for i in range(self.n) if mask >> i & 1)

    def coalition_key(self, coalition: Iterable[str]) -> str:
        return self.key(self.mask(coalition))

    def mask_of_key(self, key: str) -> int:
        return self.mask([part for part in key.split("+") if part])

    @property
    def full(self) -> int:
        return self.size - 1

    # -- data ---------------------------------------------------------------

    def add(self, coalition: Iterable[str], task_id: str, reward: float) -> None:
        """Record one episode of ``coalition`` on ``task_id``."""
        self.add_mask(self.mask(coalition), task_id, reward)

    def add_mask(self, mask: int, task_id: str, reward: float) -> None:
        r = float(reward)
        if not np.isfinite(r):
            raise UserError(f"reward must be a finite number, got {reward!r}")
        if not 0 <= mask < self.size:
            raise UserError(f"coalition mask {mask} out of range for {self.n} slots")
        self._count[mask] += 1
        self._sum[mask] += r
        self._sumsq[mask] += r * r
        if r not in (0.0, 1.0):
            self._nonbinary[mask] += 1
        row = self._task_ids.setdefault(str(task_id), len(self._task_ids))
        if self._n_obs == self._cap:
            self._cap *= 2
            self._obs_task = np.resize(self._obs_task, self._cap)
            self._obs_mask = np.resize(self._obs_mask, self._cap)
            self._obs_reward = np.resize(self._obs_reward, self._cap)
        k = self._n_obs
        self._obs_task[k] = row
        self._obs_mask[k] = mask
        self._obs_reward[k] = r
        self._n_obs = k + 1

    def add_many(
        self, masks: Iterable[int], task_ids: Iterable[str], rewards: Iterable[float]
    ) -> None:
        """Record many episodes at once (vectorised; same rules as :meth:`add_mask`)."""
        m = np.asarray(list(masks) if not isinstance(masks, np.ndarray) else masks, np.int64)
        r = np.asarray(
            list(rewards) if not isinstance(rewards, np.ndarray) else rewards, np.float64
        )
        ids = [str(t) for t in task_ids]
        if not (len(m) == len(r) == len(ids)):
            raise UserError("masks, task_ids and rewards must have the same length")
        if len(m) == 0:
            return
        if not np.all(np.isfinite(r)):
            raise UserError("rewards must be finite numbers")
        if np.any((m < 0) | (m >= self.size)):
            raise UserError(f"coalition masks out of range for {self.n} slots")
        np.add.at(self._count, m, 1)
        np.add.at(self._sum, m, r)
        np.add.at(self._sumsq, m, r * r)
        np.add.at(self._nonbinary, m, ((r != 0.0) & (r != 1.0)).astype(np.int64))
        rows = np.fromiter(
            (self._task_ids.setdefault(t, len(self._task_ids)) for t in ids),
            dtype=np.int64,
            count=len(ids),
        )
        need = self._n_obs + len(m)
        if need > self._cap:
            while self._cap < need:
                self._cap *= 2
            self._obs_task = np.resize(self._obs_task, self._cap)
            self._obs_mask = np.resize(self._obs_mask, self._cap)
            self._obs_reward = np.resize(self._obs_reward, self._cap)
        k = self._n_obs
        self._obs_task[k:need] = rows
        self._obs_mask[k:need] = m
        self._obs_reward[k:need] = r
        self._n_obs = need

    # -- statistics ---------------------------------------------------------

    @property
    def episodes(self) -> int:
        return self._n_obs

    @property
    def n_tasks(self) -> int:
        return len(self._task_ids)

    @property
    def counts(self) -> IntArray:
        return self._count.copy()

    @property
    def sums(self) -> FloatArray:
        return self._sum.copy()

    @property
    def means(self) -> FloatArray:
        """Mean reward per coalition; NaN where a coalition has no data."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self._count > 0, self._sum / np.maximum(self._count, 1), np.nan)

    @property
    def variances(self) -> FloatArray:
        """Sample variance (ddof=1) per coalition; NaN below two episodes."""
        m = self._count.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self._sum / np.maximum(m, 1)
            ss = np.maximum(self._sumsq - m * mean * mean, 0.0)
            return np.where(m > 1, ss / np.maximum(m - 1, 1), np.nan)

    def ml_variances(self) -> FloatArray:
        """Plug-in (ddof=0) variance per coalition; 0 where there is no data."""
        m = np.maximum(self._count.astype(np.float64), 1)
        mean = self._sum / m
        return np.maximum(self._sumsq / m - mean * mean, 0.0)

    def shrunk_variances(self) -> FloatArray:
        """Variances that never claim certainty from a handful of episodes.

        With binary rewards the variance is p(1-p) at p = (k+1)/(m+2), so a
        coalition that went 0/m or m/m still carries the variance of a
        Laplace-smoothed rate. With graded rewards the sample variance is
        mixed with one pseudo-episode of that same smoothed Bernoulli variance
        (a bound, since rewards lie in [0, 1]): ((m-1) s^2 + p(1-p)) / m.
        """
        m = self._count.astype(np.float64)
        prior = smoothed_bernoulli_variance(self._sum, m)
        s2 = np.nan_to_num(self.variances, nan=0.0)
        graded = ((np.maximum(m - 1, 0) * s2) + prior) / np.maximum(m, 1)
        return np.where(self._nonbinary > 0, graded, prior)

    def nonbinary_counts(self) -> IntArray:
        """Per coalition, how many rewards were neither 0 nor 1 (graded rewards)."""
        return self._nonbinary.copy()

    def missing(self) -> list[frozenset[str]]:
        """Coalitions that have no episode yet (as sets of slot names)."""
        return [self.members(int(m)) for m in np.flatnonzero(self._count == 0)]

    def missing_masks(self) -> list[int]:
        return [int(m) for m in np.flatnonzero(self._count == 0)]

    def observations(self) -> tuple[IntArray, IntArray, FloatArray]:
        """(task row, coalition mask, reward) per episode, in arrival order (views)."""
        k = self._n_obs
        return self._obs_task[:k], self._obs_mask[:k], self._obs_reward[:k]

    def block_structure(self) -> tuple[bool, bool]:
        """(complete, balanced): every task seen in every coalition, equally often."""
        tasks, masks, _ = self.observations()
        if len(tasks) == 0:
            return False, False
        cells, per_cell = np.unique(tasks * self.size + masks, return_counts=True)
        per_task = np.bincount(cells // self.size, minlength=self.n_tasks)
        complete = bool(np.all(per_task == self.size))
        if not complete:
            return False, False
        per_task_total = np.bincount(tasks, minlength=self.n_tasks)
        balanced = bool(np.all(per_cell == per_cell[0])) or bool(
            np.all(per_cell * self.size == np.repeat(per_task_total, self.size))
        )
        return True, balanced

    def has_repeats(self) -> bool:
        """True when some coalition ran more than once on the same task."""
        tasks, masks, _ = self.observations()
        if len(tasks) < 2:
            return False
        return len(np.unique(tasks * self.size + masks)) < len(tasks)

    def shared_tasks(self) -> int:
        """How many tasks were run under more than one coalition."""
        tasks, masks, _ = self.observations()
        if len(tasks) == 0:
            return 0
        cells = np.unique(tasks * self.size + masks)
        per_task = np.bincount(cells // self.size, minlength=self.n_tasks)
        return int(np.sum(per_task > 1))

    def value(self, mask: int) -> float:
        return float(self.means[mask])


def smoothed_bernoulli_variance(sums: FloatArray, counts: FloatArray) -> FloatArray:
    """p(1-p) at the Laplace-smoothed rate p = (k+1)/(m+2); works on any array shape."""
    p = np.clip((np.asarray(sums) + 1.0) / (np.asarray(counts) + 2.0), 0.0, 1.0)
    return np.asarray(p * (1.0 - p), dtype=np.float64)


def coalition_key(slots: Sequence[str], coalition: Iterable[str]) -> str:
    """Key for a coalition without building a game (:func:`agentbus.core.coalitions.coalition_key`).

    Here a slot the agent does not have is the user's mistake: a one-line
    :class:`UserError` that lists the agent's slots.
    """
    chosen = set(coalition)
    try:
        return kernel_coalition_key(slots, chosen)
    except ValueError:
        unknown = sorted(chosen - set(slots))
        raise UserError(f"unknown slot(s) {unknown}; slots are {', '.join(slots)}") from None
