"""Adaptive scheduling: turn the attribution service's suggestions into blocks to run.

The work queue asks for the next block only when its window has room, so each
choice sees the freshest *honest* estimates (admitted blocks only, see
:mod:`attribution.blocks`). A ``block`` suggestion runs the listed coalitions
on one task not used yet (common tasks across coalitions make the paired
interval apply); a ``single`` one runs one coalition on a task it has used
least. Tasks are taken in a seeded random order, not the list order (a
generator may sort its tasks by difficulty). Until the first block is
admitted, fresh task blocks are issued (complete blocks never hurt). With
deterministic sampling (temperature 0 or a fixed seed) a repeat of the same
(coalition, task) would replay the same answers, so each pair runs once and
the task pool bounds the run. Single coalitions go first to the tasks that
already hold the most of the others (filling in blocks keeps the pairing by
task), and when no untouched task is left a block suggestion completes the
used tasks instead (their missing coalitions): a run that switched between
singles and blocks used to need an untouched task, find none and end with
most of its pairs unrun. It stops when its rule holds (see
:meth:`attribution.service.AttributionService.done`), at ``max_episodes``, or
when every (coalition, task) pair has run; the stop reason then says how
much of the possible work was done.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence

from agentbus.app.evaluation import SpecFactory
from agentbus.app.workqueue import Block
from agentbus.core.coalitions import coalition_key
from agentbus.core.environment import Task
from agentbus.core.episode import EpisodeSpec
from agentbus.core.record import EpisodeRecord
from attribution import stopping
from attribution.service import AttributionService
from attribution.variance import MIN_CLUSTERS


class AdaptiveScheduler:
    """A block provider for :class:`agentbus.app.workqueue.WorkQueue`; see the module docstring."""

    def __init__(
        self,
        factory: SpecFactory,
        service: AttributionService,
        *,
        tasks: Sequence[Task],
        test_models: Sequence[str],
        target_halfwidth: float,
        max_episodes: int | None,
        deterministic: bool,
        done: Iterable[EpisodeRecord] = (),
        seed: int = 0,
    ) -> None:
        self.factory = factory
        self.service = service
        self.tasks = list(tasks)
        random.Random(seed).shuffle(self.tasks)
        self.test_models = list(test_models)
        self.target = target_halfwidth
        self.max_episodes = max_episodes
        self.deterministic = deterministic
        self.issued = 0
        self.stop_reason = ""
        #: whether the run stopped because its rule was met (results.json ``adaptive.done``:
        #: decided once, where the stop reason is, so the two always agree; the estimate
        #: recomputed after the blocks in flight ended may no longer meet it)
        self.reached = False
        self._slots = factory.plan.varied
        self._rng = random.Random(seed + 1)
        self._uses: dict[tuple[str, str, str], int] = defaultdict(int)
        self._next_fresh: dict[str, int] = defaultdict(int)
        for record in done:
            if record.kind == "coalition" and record.test_model in self.test_models:
                cell = (record.test_model, record.coalition_key, record.task_id)
                self._uses[cell] = max(self._uses[cell], record.repeat + 1)

    async def __call__(self) -> Block | None:
        """The next block to run, or None to stop."""
        if self._finished():
            return None
        block: Block | None
        if any(self.service.estimates(m) is None for m in self.test_models):
            block = self._fresh_block(self.service.widest_model() or self.test_models[0])
        else:
            suggestion = self.service.suggest()
            model = suggestion.test_model
            if suggestion.mode == "design":  # a sampled estimator: its coalitions for a fresh task
                block = self._fresh_block(model)
            elif suggestion.mode == "block":
                repeats = {
                    key: (1 if self.deterministic else max(1, k))
                    for key, k in suggestion.coalitions
                }
                block = self._fresh_block(model, repeats)
            else:
                block = self._singles(model, [key for key, _ in suggestion.coalitions])
                # that coalition ran on every task (deterministic): complete the others
                block = block or self._complete(model, None)
        if block is None:
            few = len(self.tasks) < MIN_CLUSTERS
            wanted = (
                f"every interval reached the target (+/-{self.target:g})"
                if self.service.stop == "halfwidth"
                else stopping.describe(self.service.stop, self.target)
            )
            self.stop_reason = (
                f"the tasks ran out before {wanted} ({self._work()}); give more tasks "
                "(--tasks) or a dataset"
                + (f": the stop needs {MIN_CLUSTERS} tasks or more" if few else "")
            )
        return block

    def _work(self) -> str:
        """How much of the possible (coalition, task) work has run: done and left."""
        possible = sum(len(self._keys(t)) for t in self.tasks) * len(self.test_models)
        done = sum(
            1
            for m in self.test_models
            for t in self.tasks
            for k in self._keys(t)
            if self._uses[(m, k, t.id)]
        )
        return f"{done:,} of {possible:,} (coalition, task) pairs run, {possible - done:,} left"

    def _finished(self) -> bool:
        if self.max_episodes is not None and self.issued >= self.max_episodes:
            self.stop_reason = f"issued --max-episodes {self.max_episodes} ({self._work()})"
            return True
        if self.service.done(self.target):
            self.stop_reason = stopping.describe(self.service.stop, self.target)
            self.reached = self.service.rule_met = True
            return True
        return False

    def _spec(self, model: str, key: str, task: Task) -> EpisodeSpec | None:
        uses = self._uses[(model, key, task.id)]
        if self.deterministic and uses >= 1:
            return None
        self._uses[(model, key, task.id)] = uses + 1
        self.issued += 1
        return self.factory.build(model, self._coalition(key), task, uses)

    def _coalition(self, key: str) -> tuple[str, ...]:
        members = set(key.split("+")) if key else set()
        return tuple(s for s in self._slots if s in members)

    def _keys(self, task: Task) -> list[str]:
        """The coalitions ``task`` runs: all, or those a sampled estimator drew for it."""
        return [coalition_key(self._slots, c) for c in self.factory.plan.task_coalitions(task)]

    def _fresh_block(self, model: str, repeats: dict[str, int] | None = None) -> Block | None:
        """Every listed coalition (default: all) on the next task ``model`` has not used."""
        i = self._next_fresh[model]
        while i < len(self.tasks):
            task = self.tasks[i]
            keys = self._keys(task)
            i += 1
            if any(self._uses[(model, k, task.id)] for k in keys):
                continue
            self._next_fresh[model] = i
            specs = []
            for key, times in (repeats or dict.fromkeys(keys, 1)).items():
                for _ in range(times):
                    spec = self._spec(model, key, task)
                    if spec is not None:
                        specs.append(spec)
            return self._block(specs, task.id)
        self._next_fresh[model] = i
        return self._complete(model, repeats)

    def _complete(self, model: str, repeats: dict[str, int] | None) -> Block | None:
        """No untouched task left: the listed coalitions a used task lacks, fullest task first.

        Filling in a task's missing coalitions is the step that keeps the
        pairing by task when fresh tasks are gone; the run ends only when no
        task lacks any of them.
        """
        best: tuple[int, Task, list[str]] | None = None
        for task in self.tasks:
            keys = self._keys(task)
            missing = [
                k for k in (repeats or keys) if k in keys and not self._uses[(model, k, task.id)]
            ]
            if missing and (best is None or len(missing) < best[0]):
                best = (len(missing), task, missing)
        if best is None:
            return None
        _, task, missing = best
        specs = [s for s in (self._spec(model, k, task) for k in missing) if s is not None]
        return self._block(specs, task.id)

    def _singles(self, model: str, keys: list[str]) -> Block | None:
        """One episode per key, each on a least-used task (ties broken at random)."""
        specs = []
        for key in keys:
            candidates = [
                t for t in self.tasks if not (self.deterministic and self._uses[(model, key, t.id)])
            ]
            if not candidates:
                continue
            low = min(self._uses[(model, key, t.id)] for t in candidates)
            least = [t for t in candidates if self._uses[(model, key, t.id)] == low]
            # among those, the tasks holding the most other coalitions: fill blocks in
            held = {
                t.id: sum(bool(self._uses[(model, k, t.id)]) for k in self._keys(t)) for t in least
            }
            most = max(held.values())
            task = self._rng.choice([t for t in least if held[t.id] == most])
            spec = self._spec(model, key, task)
            if spec is not None:
                specs.append(spec)
        return self._block(specs, specs[0].task.id if len(specs) == 1 else "")

    @staticmethod
    def _block(specs: list[EpisodeSpec], task: str) -> Block | None:
        if not specs:
            return None
        return Block(tuple(s.episode_id for s in specs), tuple(specs), task)


__all__ = ["AdaptiveScheduler"]
