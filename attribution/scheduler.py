"""Adaptive scheduling: turn the service's suggestions into episodes to run.

The runtime pulls the next episode only when a slot frees, so every pull sees
the freshest estimates. A ``block`` suggestion runs the listed coalitions on
one task not used yet (common tasks across coalitions make the paired
interval apply); a ``single`` one runs one coalition on the task it has seen
least. With deterministic sampling (temperature 0 or a fixed seed) a repeat of
the same (coalition, task) would replay the same answers, so each pair runs
once and the task pool is what bounds the run. The source stops when every
interval is narrower than the target (anytime-valid, so stopping on it keeps
coverage), at ``max_episodes``, or when the tasks are used up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Sequence

import anyio

from agentbus.coalitions import coalition_key
from agentbus.environment import Task
from agentbus.episode import EpisodeSpec
from agentbus.evaluation import SpecFactory, episode_id
from attribution.service import AttributionService


class AdaptiveSource:
    """An async iterator of episode specs chosen by the attribution service."""

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
        done_ids: set[str],
    ) -> None:
        self.factory = factory
        self.service = service
        self.tasks = list(tasks)
        self.test_models = list(test_models)
        self.target = target_halfwidth
        self.max_episodes = max_episodes
        self.deterministic = deterministic
        self.done_ids = set(done_ids)
        self.issued = 0
        self.stop_reason = ""
        self._slots = factory.plan.varied
        self._uses: dict[tuple[str, str, str], int] = defaultdict(int)
        self._next_block_task: dict[str, int] = defaultdict(int)
        for eid in self.done_ids:
            parts = eid.split("|")
            if len(parts) == 4 and parts[0] in self.test_models:
                key = "" if parts[1] == "-" else parts[1]
                self._uses[(parts[0], key, parts[2])] += 1

    def __aiter__(self) -> AsyncIterator[EpisodeSpec]:
        return self._generate()

    def _coalition(self, key: str) -> tuple[str, ...]:
        members = set(key.split("+")) if key else set()
        return tuple(s for s in self._slots if s in members)

    def _spec(self, model: str, key: str, task: Task) -> EpisodeSpec | None:
        uses = self._uses[(model, key, task.id)]
        if self.deterministic and uses >= 1:
            return None
        self._uses[(model, key, task.id)] = uses + 1
        coalition = self._coalition(key)
        eid = episode_id(model, coalition_key(self._slots, coalition), task.id, uses)
        if eid in self.done_ids:
            return None
        self.issued += 1
        return self.factory.build(model, coalition, task, uses)

    def _fresh_task(self, model: str) -> Task | None:
        """The next task no coalition of ``model`` has run (for a task block)."""
        i = self._next_block_task[model]
        while i < len(self.tasks):
            task = self.tasks[i]
            i += 1
            if not any(
                self._uses[(model, coalition_key(self._slots, c), task.id)]
                for c in self.factory.plan.coalitions
            ):
                self._next_block_task[model] = i
                return task
        self._next_block_task[model] = i
        return None

    def _least_used_task(self, model: str, key: str) -> Task | None:
        best: tuple[int, Task] | None = None
        for task in self.tasks:
            uses = self._uses[(model, key, task.id)]
            if self.deterministic and uses:
                continue
            if best is None or uses < best[0]:
                best = (uses, task)
        return None if best is None else best[1]

    def _finished(self) -> bool:
        if self.max_episodes is not None and self.service.collector.episodes >= self.max_episodes:
            self.stop_reason = f"reached --max-episodes {self.max_episodes}"
            return True
        if self.max_episodes is not None and self.issued >= self.max_episodes:
            self.stop_reason = f"issued --max-episodes {self.max_episodes}"
            return True
        if self.service.done(self.target):
            self.stop_reason = f"every 95% interval is narrower than +/-{self.target:g}"
            return True
        return False

    async def _generate(self) -> AsyncIterator[EpisodeSpec]:
        # first a task block per model, so every coalition is estimable
        for model in self.test_models:
            task = self._fresh_task(model)
            if task is None:
                continue
            for coalition in self.factory.plan.coalitions:
                spec = self._spec(model, coalition_key(self._slots, coalition), task)
                if spec is not None:
                    yield spec
        idle_rounds = 0
        while not self._finished():
            if self.service.estimates(self.test_models[0]) is None and idle_rounds < 200:
                idle_rounds += 1
                await anyio.sleep(0.01)  # wait for the first block to come back
                continue
            suggestion = self.service.suggest()
            specs: list[EpisodeSpec] = []
            if suggestion.mode == "block":
                task = self._fresh_task(suggestion.test_model)
                if task is not None:
                    for key, repeats in suggestion.coalitions:
                        for _ in range(1 if self.deterministic else max(1, repeats)):
                            spec = self._spec(suggestion.test_model, key, task)
                            if spec is not None:
                                specs.append(spec)
            else:
                for key, _ in suggestion.coalitions:
                    task = self._least_used_task(suggestion.test_model, key)
                    if task is not None:
                        spec = self._spec(suggestion.test_model, key, task)
                        if spec is not None:
                            specs.append(spec)
            if not specs:
                self.stop_reason = (
                    "the tasks ran out before every interval reached the target "
                    f"(+/-{self.target:g}); give more tasks (--tasks) or a dataset"
                )
                return
            for spec in specs:
                yield spec
