"""Live attribution: estimates that update as episodes end, and what to run next.

The service subscribes to ``episode.ended`` on the run's EventHub (``block``
policy: the estimates must see every outcome), keeps one game per test model
(O(1) per event; an exact game's estimates cost O(2^n n) plus one pass over
the episodes when a snapshot is built), and publishes ``attribution.snapshot``
events at most every ``snapshot_interval_s``. It also answers the adaptive
scheduler: :meth:`suggest` (which coalitions, as a whole task block or a single
episode) and :meth:`done` (every slot's interval narrower than the target).

Start it with ``await tg.start(service.run)`` so that it is subscribed before
the first episode ends; it runs until the hub closes or it is cancelled, and
publishes a final snapshot on the way out when anything changed.

Honest live estimates: with ``ordered=True`` (what a run uses) a record enters
the estimate only through :class:`attribution.blocks.BlockAdmission`: the
scheduler declares blocks (:meth:`expect`) in the order it issues them, and a
block is admitted once all its cells have settled and every earlier block is
in. Until the first block is in, snapshots say "not estimable yet" and why.
``everything`` keeps every counting record regardless (the final results,
once every block has settled, are the same data).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import anyio
import numpy as np
import structlog
from anyio.abc import TaskStatus

from agentbus.core.events import ATTRIBUTION_SNAPSHOT, EPISODE_ENDED, EventHub
from agentbus.core.record import EpisodeRecord
from attribution import stopping
from attribution.allocation import planned_episodes
from attribution.blocks import BlockAdmission
from attribution.collect import Collector
from attribution.estimates import Estimates, NotEstimable
from attribution.estimators import Estimator
from attribution.exact import shapley_values
from attribution.headline import headline
from attribution.power import projection_note
from attribution.results import EXACT_MAX_SLOTS, Results, build_results, given_up, model_summary
from attribution.sampling import StratifiedShapley
from attribution.stop_interval import FIXED, lead_with_stop_interval
from attribution.suggestion import Suggestion, exact_suggestion
from attribution.variance import MIN_CLUSTERS

log = structlog.get_logger(__name__)


class AttributionService:
    """Online Shapley/Banzhaf estimates per test model, snapshots and allocation."""

    def __init__(
        self,
        hub: EventHub,
        slots: Iterable[str],
        *,
        snapshot_interval_s: float = 1.0,
        confidence: float = 0.95,
        adaptive: bool = False,
        target_halfwidth: float | None = None,
        horizon: float | None = None,
        test_models: Iterable[str] = (),
        costs: Mapping[str, float] | None = None,
        exact_max_slots: int = EXACT_MAX_SLOTS,
        seed: int = 0,
        ordered: bool = False,
        estimator: str = "exact",
        stop: str = "halfwidth",
    ) -> None:
        self.hub = hub
        self.slots = tuple(slots)
        self.snapshot_interval_s = float(snapshot_interval_s)
        self.confidence = float(confidence)
        self.adaptive = adaptive
        self.target_halfwidth = target_halfwidth
        if horizon is None and target_halfwidth is not None:
            # tune the anytime-valid intervals for the run's planned size (fixed in advance)
            horizon = planned_episodes(len(self.slots), target_halfwidth, confidence=confidence)
        self.horizon = horizon
        self.costs = dict(costs or {})
        #: the data of the estimate: admitted blocks only when ``ordered``
        self.collector = Collector(self.slots)
        #: every counting record seen, admitted or not (final results, counts)
        self.everything = Collector(self.slots)
        self.ordered = ordered
        self.admission = BlockAdmission()
        #: exact games up to ``exact_max_slots``; beyond, the size-stratified estimator
        self.exact = len(self.slots) <= exact_max_slots
        self._strata: dict[str, StratifiedShapley] = {}
        #: a per-task sampled estimator (--estimator, attribution.estimators); None: exact
        #: games (or, beyond ``exact_max_slots``, the pooled size-stratified one)
        self.sampled: Estimator | None = None
        self.estimator_name = "exact"
        chosen = Estimator.make(estimator, len(self.slots))
        if chosen.name != "exact":
            self.sampled = chosen
            self.estimator_name = chosen.name
            self.exact = False
        if stop not in stopping.RULES:
            raise ValueError(f"unknown stop rule {stop!r}")
        self.stop = stop
        #: the adaptive scheduler stopped because the rule was met (set by it, once): the
        #: snapshot's ``done`` and headline keep saying so on data that arrive later
        self.rule_met = False
        self._rng = np.random.default_rng(seed)
        for model in test_models:
            self.collector.game(model)
            self.everything.game(model)
        self.snapshots_published = 0
        self._dirty = False
        self._last_publish = 0.0
        self._cache: dict[str, Estimates | None] = {}
        self._projection: tuple[tuple[str, int] | None, str | None] = (None, None)

    # -- feeding ------------------------------------------------------------

    def observe(self, item: Mapping[str, Any] | EpisodeRecord) -> bool:
        """Feed one record or ``episode.ended`` payload (live, or replayed from the log).

        Returns True when it entered the estimate right away (always so
        without ``ordered``; with it, only when it completed the next block).
        """
        record = item if isinstance(item, EpisodeRecord) else EpisodeRecord.parse(item)
        if record is None:
            self.everything.ignored += 1
            return False
        record = record.without_trace()  # kept all run long; the log has the trace
        if not self.everything.observe(record):
            return False
        if not self.ordered:
            return self._admit([record])
        return self._admit(self.admission.record(record))

    def expect(self, ident: int, cells: Sequence[str], task: str = "") -> None:
        """Declare the next scheduling block (cells = episode ids), in issue order."""
        self._admit(self.admission.expect(ident, cells, task))

    def give_up(self, cell: str) -> None:
        """A cell's retries are spent: its block no longer waits for it."""
        self._admit(self.admission.give_up(cell))

    def release_unplanned(self) -> None:
        """Admit records no declared block covers (a resumed adaptive run's earlier data)."""
        self._admit(self.admission.release_unplanned())

    def _admit(self, records: list[EpisodeRecord]) -> bool:
        entered = False
        for record in records:
            if not self.collector.observe(record):
                continue
            entered = True
            model = str(record.test_model)
            self._cache.pop(model, None)
            if not self.exact and self.sampled is None:
                game = self.collector.games[model]
                self._stratified(model).add_mask(game.mask(record.coalition), record.reward)
        self._dirty = self._dirty or entered
        return entered

    async def run(
        self,
        *,
        subscribe: bool = True,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Consume episode events and publish snapshots until the hub closes.

        With ``subscribe=False`` the owner feeds :meth:`observe` itself (the
        run does, from its outcome callback, so the estimate is never behind
        the runtime) and this only publishes snapshots until cancelled.
        """
        if not subscribe:
            task_status.started()
            await self._ticker()
            return
        sub = self.hub.subscribe([EPISODE_ENDED], policy="block", maxsize=4096)
        task_status.started()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._ticker)
                async for event in sub:
                    self.observe(event.data)
                    if time.monotonic() - self._last_publish >= self.snapshot_interval_s:
                        await self.publish_snapshot()
                tg.cancel_scope.cancel()
        finally:
            sub.close()
            if self._dirty:
                with anyio.move_on_after(1.0, shield=True):
                    await self.publish_snapshot()

    async def _ticker(self) -> None:
        """Publish pending changes even when episodes stop arriving."""
        while True:
            await anyio.sleep(max(self.snapshot_interval_s, 0.01))
            if self._dirty:
                await self.publish_snapshot()

    async def publish_snapshot(self) -> None:
        self._last_publish = time.monotonic()
        self._dirty = False
        if not self.hub.wants(ATTRIBUTION_SNAPSHOT):
            return
        await self.hub.publish(ATTRIBUTION_SNAPSHOT, self.snapshot())
        self.snapshots_published += 1

    # -- reading ------------------------------------------------------------

    def _stratified(self, test_model: str) -> StratifiedShapley:
        est = self._strata.get(test_model)
        if est is None:
            est = self._strata[test_model] = StratifiedShapley(self.slots)
        return est

    def estimates(self, test_model: str) -> Estimates | None:
        """Shapley estimates for one test model (None while not estimable)."""
        if test_model in self._cache:
            return self._cache[test_model]
        game = self.collector.games.get(test_model)
        est: Estimates | None = None
        if game is not None:
            try:
                if self.sampled is not None:
                    est = self.sampled.estimate(
                        game, confidence=self.confidence, horizon=self.horizon
                    )
                elif self.exact:
                    est = shapley_values(game, confidence=self.confidence, horizon=self.horizon)
                else:
                    est = self._stratified(test_model).estimates(self.confidence, self.horizon)
            except NotEstimable:
                est = None
        self._cache[test_model] = est
        return est

    def snapshot(self) -> dict[str, Any]:
        """JSON-friendly state: per test model coalitions, Shapley, Banzhaf, intervals.

        Everything in it comes from admitted data only. ``estimable`` is
        False (and ``reason`` says why) until every test model has an estimate.
        """
        failures = self.everything.failures
        models = {
            model: model_summary(
                game,
                confidence=self.confidence,
                failures=failures.get(model, 0),
                horizon=self.horizon,
                interactions=False,
                estimator=self.sampled.name if self.sampled is not None else "exact",
            )
            for model, game in self.collector.games.items()
        }
        for model, count in failures.items():
            models.setdefault(model, {"coalitions": {}, "shapley": None, "failures": count})
        reason = self.not_estimable_reason(models)
        snap: dict[str, Any] = {
            "slots": list(self.slots),
            "default_model": self.collector.default_model or self.everything.default_model,
            "confidence": self.confidence,
            "estimable": reason is None,
            "reason": reason,
            "admitted_tasks": self.admission.admitted_blocks if self.ordered else None,
            "episodes": self.collector.episodes,
            "episodes_ended": self.everything.episodes,
            "failures": sum(failures.values()),
            "failure_kinds": self.everything.failure_kinds,
            # cells whose every attempt so far failed (given up once the run ends)
            "given_up": given_up(self.everything.uncounted(), list(self.slots)),
            "models": models,
            "adaptive": self.adaptive,
            "interval": FIXED,
        }
        if self.sampled is not None:
            snap["estimator"] = self.sampled.name
        if self.target_halfwidth is not None:
            snap["target_halfwidth"] = self.target_halfwidth
            snap["stop"] = self.stop
            snap["done"] = self.rule_met or self.done(self.target_halfwidth)
        # an adaptive run is looked at (and stops) on the data: lead with the interval
        # that holds there (attribution.results.STOP_INTERVAL)
        lead_with_stop_interval(snap, self.stop if self.adaptive else None)
        snap["headline"] = headline(snap)  # the viewer's line: the console's words
        return snap

    def not_estimable_reason(self, models: Mapping[str, Any] | None = None) -> str | None:
        """Why the live estimate cannot be shown yet; None once every model has one."""
        if not self.collector.games:
            return "no test model has an episode yet"
        missing = [m for m in self.collector.games if self.estimates(m) is None]
        if not missing:
            return None
        if self.ordered and self.admission.admitted_blocks == 0:
            waiting = self.admission.waiting_for()
            if waiting is None:
                return "waiting for the first task block to be scheduled"
            return f"waiting for the first complete task block: {waiting}"
        summary = (models or {}).get(missing[0]) or {}
        detail = summary.get("not_estimable") or "some coalition has no admitted episode"
        return f"{missing[0]}: {detail}"

    def results(self) -> Results:
        """The results-file content (see :mod:`attribution.results`) for what was seen."""
        return build_results(
            self.everything,
            confidence=self.confidence,
            horizon=self.horizon,
            estimator=self.estimator_name,
        )

    def projection_note(self) -> str | None:
        """One live line: tasks and episodes the target needs at the spread seen so far.

        The same projection as ``python -m agentbus.plan`` (:mod:`attribution.power`),
        for the test model whose widest interval is widest; recomputed only when
        admitted data changed.
        """
        target = self.target_halfwidth
        model = self.widest_model()
        if target is None or model is None:
            return None
        game = self.collector.games[model]
        key = (model, game.episodes)
        if self._projection[0] == key:
            return self._projection[1]
        est = self.sampled or Estimator("exact", game.n)
        note = projection_note(est.per_task_values(game), target, est.episodes_per_task())
        self._projection = (key, note)
        return note

    def halfwidths(self, test_model: str, *, anytime: bool = False) -> np.ndarray | None:
        est = self.estimates(test_model)
        if est is None:
            return None
        return est.halfwidths(anytime=anytime)

    def done(self, target_halfwidth: float | None = None, *, anytime: bool = False) -> bool:
        """The run's stop rule is met for every test model (``--stop``, attribution.stopping).

        ``halfwidth`` (the default): every slot of every test model has an
        interval narrower than the target.

        The stopping rule of adaptive runs (Chow and Robbins 1965): the first
        time every fixed-sample interval is under the target, once each test
        model has at least ``MIN_CLUSTERS`` tasks (the task-as-unit form is in
        use, and its spread is no longer a guess from a handful of tasks).
        Replayed on real outcomes (benchmarks/stopping_rules.py) this stop
        costs 0.002-0.006 of coverage against a fixed run of 20 tasks; the
        end-to-end test measures the interval it shows. ``anytime`` stops on
        the anytime-valid interval instead (valid under any stopping rule, and
        about 1.5x wider).
        """
        target = self.target_halfwidth if target_halfwidth is None else target_halfwidth
        if target is None or not self.collector.games:
            return False
        if self.stop != "halfwidth" or self.sampled is not None:
            for model, game in self.collector.games.items():
                est = self.estimates(model)
                tasks = game.n_tasks if self.sampled is None else est.units if est else 0
                if est is None or not stopping.reached(est, self.stop, target, tasks):
                    return False
            return True
        for model, game in self.collector.games.items():
            if not anytime and game.n_tasks < MIN_CLUSTERS:
                return False
            hw = self.halfwidths(model, anytime=anytime)
            if hw is None or not bool(np.all(hw <= target)):
                return False
        return True

    # -- scheduling ---------------------------------------------------------

    def widest_model(self) -> str | None:
        """The test model whose widest interval is widest (or one not estimable yet)."""
        worst: tuple[float, str] | None = None
        for model in self.collector.games:
            hw = self.halfwidths(model)
            width = math.inf if hw is None else float(np.max(hw))
            if worst is None or width > worst[0]:
                worst = (width, model)
        return None if worst is None else worst[1]

    def suggest(self, test_model: str | None = None) -> Suggestion:
        """What to run next: a task block while tasks correlate, else one coalition.

        Blocks (every coalition on one fresh task, Neyman repeats for the heavy
        ones) are used while the estimated within-task correlation exceeds
        ``BLOCK_RHO`` (and before it can be estimated), for games of at most
        ``MAX_BLOCK`` coalitions. Otherwise the greedy Neyman rule picks the
        coalition with the largest variance reduction per cost, counting only
        slots still wider than the target.
        """
        model = test_model or self.widest_model()
        if model is None:
            raise NotEstimable("no test model known yet: pass test_models or feed episodes first")
        game = self.collector.game(model)
        if self.sampled is not None:
            why = f"{self.sampled.name}: the coalitions drawn for a fresh task"
            return Suggestion(model, "design", [], why)
        if not self.exact:
            mask = self._stratified(model).sample(self._rng)
            return Suggestion(model, "single", [(game.key(mask), 1)], "size-stratified sampling")
        hw = self.halfwidths(model, anytime=False)
        target = self.target_halfwidth if self.target_halfwidth is not None else 0.0
        return exact_suggestion(model, game, hw, target, self.costs)
