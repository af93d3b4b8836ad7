"""What the run has spent, whether it may spend more, and what the whole run will cost.

* :class:`Spend` sums the *billed* cost of every attempt (calls that went
  upstream; cache answers cost nothing), including failed attempts and the
  records a resumed run replays from its log.
* :class:`BudgetGate` sits between the work queue and the runtime. Before it
  hands out an episode it checks that what is spent, plus what the episodes
  in flight and this one are projected to cost, stays within
  ``--budget-usd``; when it does not, it waits for episodes in flight to end
  and checks again, and stops only when nothing is in flight and the next
  episode still does not fit. The projection is per model assignment (a
  coalition of strong models costs 20 times one of weak ones), summed from
  what each (slot, model) has cost (:class:`AssignmentCosts`). The episodes
  that end first are the short, cheap ones, so while others run every
  episode is priced as if it ran to the step limit; the last ones, run
  alone, at their mean, so the budget is used to its end. While a (slot,
  model) has no ended episode yet, only :data:`START_IN_FLIGHT` episodes run.
  (The first gate projected every episode at the mean so far, zero before
  any had ended: the default run started all 480 episodes at once and billed
  $0.93 of a $0.50 budget.)
  Every episode in flight keeps its reservation (:meth:`AssignmentCosts.reserve`,
  at least the most any episode of its slots' models has cost; 0 while
  they have none) until it ends, the last ones too: an earlier gate priced
  an episode that ran alone at its mean, so the run could pass the budget
  by one long episode's excess over that mean ($1.0532 billed of $1 on a
  loaded machine, when a long strong-model episode happened to be last).
  Every admission keeps spent + the reservations in flight within the
  budget, so the final bill passes it by at most what the episodes in
  flight at the last admission cost beyond their reservations, whatever
  the concurrency or the order they end in. ``stopped_at`` states that
  figure (``overshoot_bound_usd``; 0 when each stayed within its
  reservation). The price of a cap: the run stops once the next episode's
  reservation no longer fits, up to one reservation short of the budget.
  The budget is not a result key: resuming with a larger one continues where
  the run stopped. ``--budget-tokens`` keeps the simpler projection per
  episode (:meth:`BudgetGate.allows`).
* :class:`RunEstimate` projects the whole run's billed cost from complete
  task blocks, admitted in schedule order exactly like the live attribution
  estimate (:class:`attribution.blocks.BlockAdmission`), so the projection
  is not biased by which episodes happened to end first. The task order is a
  seeded random permutation, so the first blocks are a random sample of the
  tasks; the interval is a t interval with the finite-population correction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

from agentbus.core.episode import EpisodeSpec
from agentbus.core.record import EpisodeRecord
from agentbus.llm.billing import Line
from attribution.blocks import BlockAdmission
from attribution.cost import mean_interval, usd

#: episodes let run while the cost of a (slot, model) they use is not known yet
START_IN_FLIGHT = 8
#: the step limit assumed until a longer episode is seen (agentbus.Environment's default)
DEFAULT_STEP_LIMIT = 10


class AssignmentCosts:
    """Billed USD of each (slot, model), per episode and per step, from the ended episodes.

    An episode's cost is close to the sum of its slots' costs, and each slot's
    depends on its model, so ``reasoning on sim:strong`` learnt from one
    coalition prices every coalition with it. The episodes that end first are
    the short ones (a failure runs to the step limit), so their mean cost is
    no projection for the ones still running: :meth:`bound` prices an episode
    at its cost per step times the step limit instead.
    """

    def __init__(self, step_limit: int = DEFAULT_STEP_LIMIT) -> None:
        self._usd: dict[tuple[str, str], float] = defaultdict(float)
        self._n: dict[tuple[str, str], int] = defaultdict(int)
        #: sum over episodes of s(s+1)/2 for s steps (see :meth:`bound`)
        self._steps: dict[tuple[str, str], int] = defaultdict(int)
        #: the most one episode has cost in each (slot, model)
        self._max: dict[tuple[str, str], float] = defaultdict(float)
        #: the step limit (the longest episode seen, if longer than the assumed one)
        self.step_limit = step_limit

    def observe(self, record: EpisodeRecord) -> None:
        steps = max(record.outcome.steps, 1)
        self.step_limit = max(self.step_limit, steps)
        for slot, model in record.assignment.items():
            part = record.outcome.usage.get(slot)
            cost = (part.sent_usd or 0.0) if part is not None else 0.0
            self._usd[(slot, model)] += cost
            self._max[(slot, model)] = max(self._max[(slot, model)], cost)
            self._n[(slot, model)] += 1
            self._steps[(slot, model)] += steps * (steps + 1) // 2

    def knows(self, key: tuple[tuple[str, str], ...]) -> bool:
        """Whether every (slot, model) of ``key`` has ended at least once."""
        return all(self._n.get(part) for part in key)

    def mean(self, key: tuple[tuple[str, str], ...]) -> float:
        """The expected cost: the sum over the slots of the mean cost of (slot, model)."""
        return sum(self._usd[p] / self._n[p] for p in key if self._n.get(p))

    def bound(self, key: tuple[tuple[str, str], ...]) -> float:
        """The cost of an episode that runs to the step limit (what one in flight may cost).

        Each step's prompt holds the steps before it, so step ``i`` costs about
        ``i`` times the first: an episode of ``s`` steps about ``s(s+1)/2``
        first steps. Fitted over the ended episodes, which the long ones soon
        dominate; while only short ones have ended it is on the safe side.
        """
        first = sum(self._usd[p] / self._steps[p] for p in key if self._steps.get(p))
        limit = self.step_limit
        return max(first * limit * (limit + 1) / 2, self.mean(key))

    def reserve(self, key: tuple[tuple[str, str], ...]) -> float:
        """What admission sets aside for an episode of ``key`` until it ends.

        The larger of :meth:`bound` and the sum over its slots of the most
        one episode has cost there, so no episode seen so far would have
        cost more than its reservation.
        """
        return max(self.bound(key), sum(self._max.get(p, 0.0) for p in key))


def spec_key(spec: EpisodeSpec) -> tuple[tuple[str, str], ...]:
    assignment = spec.metadata.get("assignment") or {}
    return tuple(sorted((str(k), str(v)) for k, v in assignment.items()))


#: complete task blocks the projection waits for (all of them in a smaller run): early
#: enough to act on, enough for a t interval that is not absurdly wide
ESTIMATE_AFTER = 5


class Spend:
    """Billed cost and tokens over every attempt of the run (replayed ones included)."""

    def __init__(self) -> None:
        self.usd = 0.0
        #: calls and tokens sent upstream, totalled as a call file's bill totals them
        self.sent = Line()
        self.episodes = 0

    @property
    def tokens(self) -> int:
        return self.sent.tokens

    def observe(self, record: EpisodeRecord) -> None:
        self.episodes += 1
        self.usd += record.outcome.sent_usd
        for u in record.outcome.usage.values():
            self.sent.add(
                u.sent_calls, u.sent_input_tokens, u.sent_cached_input_tokens, u.sent_output_tokens
            )

    def summary(self) -> dict[str, Any]:
        return {**self.sent.sent_summary(self.usd), "attempts": self.episodes}


class BudgetGate:
    """Hands out episodes while the budget allows the next one; see the module docstring."""

    def __init__(
        self,
        spend: Spend,
        *,
        usd: float | None,
        tokens: int | None,
        in_flight: Callable[[], int],
        per_episode: Callable[[], tuple[float, float] | None] | None = None,
        in_blocks: Callable[[], tuple[float, float] | None] | None = None,
        costs: AssignmentCosts | None = None,
    ) -> None:
        self.spend = spend
        #: cost per model assignment, for the projection of each episode handed out
        self.costs = costs if costs is not None else AssignmentCosts()
        #: episodes handed out and not ended yet: episode id -> assignment key
        self.running: dict[str, tuple[tuple[str, str], ...]] = {}
        #: what each episode in flight was reserved at admission (0: cost unknown then)
        self.reserved: dict[str, float] = {}
        #: the episodes in flight at the last admission, and what those that ended since
        #: cost beyond their reservations: the most the bill can pass the budget by
        self._tail: set[str] = set()
        self.overshoot_bound = 0.0
        self._ended = anyio.Event()
        #: (USD, tokens) per episode over complete task blocks, once there are some
        self.per_episode = per_episode
        #: (USD, tokens) the task blocks in flight are still expected to cost
        self.in_blocks = in_blocks
        self.usd = usd
        self.tokens = tokens
        self.in_flight = in_flight
        self.stopped: str | None = None
        #: spend and episodes in flight when the gate closed (the bound's terms)
        self.stopped_at: dict[str, Any] | None = None

    @property
    def active(self) -> bool:
        return self.usd is not None or self.tokens is not None

    def observe(self, record: EpisodeRecord) -> None:
        """An episode ended: its cost is known, its projection leaves the work in flight."""
        self.costs.observe(record)
        self.running.pop(record.episode_id, None)
        reserved = self.reserved.pop(record.episode_id, 0.0)
        if record.episode_id in self._tail:
            self.overshoot_bound += max(record.outcome.sent_usd - reserved, 0.0)
            if self.stopped_at is not None:
                self.stopped_at["overshoot_bound_usd"] = self.overshoot_bound
        self._ended.set()

    def fits(self, spec: EpisodeSpec) -> bool | None:
        """Whether ``spec`` fits the USD budget now; None if only waiting can tell.

        Spent + the projection of the episodes in flight and of this one must
        stay within the budget (see the module docstring for the projection).
        """
        assert self.usd is not None
        s = self.spend
        if s.usd >= self.usd:
            self.stopped = (
                f"budget: stopped at the billed cost {usd(s.usd)} of {usd(self.usd)} "
                f"({s.episodes} episodes)"
            )
            return False
        key = spec_key(spec)
        held = sum(self.reserved.values())
        if not all(self.costs.knows(k) for k in (key, *self.running.values())):
            # a model in a slot whose cost is not known yet: a few at a time until it is
            few = len(self.running) < START_IN_FLIGHT and s.usd + held <= self.usd
            return True if few else None if self.running else False
        if len(self.running) >= START_IN_FLIGHT + 2 * s.episodes:  # slow start
            return None
        # every episode in flight keeps its reservation until it ends (the larger of the
        # one made at its admission and what is known now), and so does this one
        now = {i: self.costs.reserve(k) for i, k in self.running.items()}
        held = sum(max(self.reserved.get(i, 0.0), r) for i, r in now.items())
        coming = held + self.costs.reserve(key)
        if s.usd + coming <= self.usd:
            return True
        self.stopped = (
            f"budget: stopped before the billed cost would pass {usd(self.usd)} "
            f"(billed {usd(s.usd)} over {s.episodes} episodes; the next one is reserved "
            f"at {usd(self.costs.reserve(key))}"
            f"{f', {usd(coming)} with the work in flight' if self.running else ''})"
        )
        return None if self.running else False

    def allows(self) -> bool:
        """Whether one more episode fits, given the ones in flight (per-episode projection)."""
        s = self.spend
        ahead = self.in_flight() + 1
        blocks = self.per_episode() if self.per_episode is not None else None
        rest = self.in_blocks() if self.in_blocks is not None else None
        # the same projection for cost (measure 0) and tokens (measure 1)
        for i, cap, spent in ((0, self.usd, s.usd), (1, self.tokens, s.tokens)):
            if cap is None:
                continue
            per = spent / s.episodes if s.episodes else 0.0
            per = max(per, blocks[i]) if blocks else per
            coming = rest[i] + per if rest is not None else per * ahead
            if spent >= cap or spent + coming > cap:
                self.stopped = "budget: stopped before " + (
                    f"the billed cost would pass {usd(cap)} (billed {usd(spent)} over "
                    f"{s.episodes} episodes, about {usd(coming)} more expected from the "
                    "work in flight)"
                    if i == 0
                    else f"the tokens sent would pass {cap:,} ({spent:,} sent over "
                    f"{s.episodes} episodes, about {per:,.0f} each)"
                )
                return False
        return True

    def _close(self, in_flight: int) -> None:
        s = self.spend
        self.stopped_at = {
            "billed_usd": s.usd,
            "sent_tokens": s.tokens,
            "episodes": s.episodes,
            "in_flight": in_flight,
            "reserved_in_flight_usd": sum(self.reserved.values()),
            "overshoot_bound_usd": self.overshoot_bound,
        }
        self.stopped = f"{self.stopped}; {in_flight} episodes were still in flight"

    async def _admit(self, spec: EpisodeSpec) -> bool:
        """Wait until ``spec`` fits the budget (True) or never will (False)."""
        while True:
            if self.usd is not None:
                ok = self.fits(spec)
                if ok is None and self.running:
                    self._ended = anyio.Event()
                    with anyio.move_on_after(1.0) as waited:
                        await self._ended.wait()
                    if waited.cancelled_caught and self.in_flight() == 0:
                        self.running.clear()  # attempts that ended without a record
                        self.reserved.clear()
                        self._tail.clear()
                    continue
                if not ok:
                    return False
            if self.tokens is not None and not self.allows():
                return False
            self.stopped = None
            return True

    async def gate(
        self, specs: AsyncIterator[EpisodeSpec], stop: Callable[[], None]
    ) -> AsyncIterator[EpisodeSpec]:
        """``specs`` as long as the budget allows; then ``stop()`` the source."""
        async for spec in specs:
            if self.active and (self.stopped_at is not None or not await self._admit(spec)):
                if self.stopped_at is None:
                    self._close(self.in_flight())
                stop()
                return
            if self.active:
                key = spec_key(spec)
                self.running[spec.episode_id] = key
                if self.usd is not None:
                    known = self.costs.knows(key)
                    self.reserved[spec.episode_id] = self.costs.reserve(key) if known else 0.0
                    self._tail, self.overshoot_bound = set(self.running), 0.0
            yield spec


class RunEstimate:
    """The whole run's billed cost projected from its first complete task blocks."""

    def __init__(self, total_blocks: int, *, confidence: float = 0.95) -> None:
        self.total_blocks = total_blocks
        self.confidence = confidence
        self.admission = BlockAdmission()
        self._block_usd: dict[str, float] = defaultdict(float)
        self._block_tokens: dict[str, int] = defaultdict(int)
        self._block_attempts: dict[str, int] = defaultdict(int)
        self._declared: list[str] = []
        self._admitted: list[str] = []
        self.announced = False

    def expect(self, ident: int, cells: tuple[str, ...], task: str) -> None:
        self._declared.append(task)
        self._admit(self.admission.expect(ident, cells, task))

    def give_up(self, cell: str) -> None:
        self._admit(self.admission.give_up(cell))

    def observe(self, record: EpisodeRecord) -> None:
        if record.kind != "coalition":
            return
        self._block_usd[record.task_id] += record.outcome.sent_usd
        self._block_tokens[record.task_id] += record.outcome.sent_tokens
        self._block_attempts[record.task_id] += 1
        if record.counts:
            self._admit(self.admission.record(record))

    def _admit(self, records: list[EpisodeRecord]) -> None:
        for r in records:
            if r.task_id not in self._admitted:
                self._admitted.append(r.task_id)

    def per_episode(self) -> tuple[float, float] | None:
        """Billed (USD, tokens) per attempt over the complete blocks; None before the first."""
        n = sum(self._block_attempts[t] for t in self._admitted)
        if not n:
            return None
        usd = sum(self._block_usd[t] for t in self._admitted)
        tokens = sum(self._block_tokens[t] for t in self._admitted)
        return usd / n, tokens / n

    def in_blocks(self) -> tuple[float, float] | None:
        """(USD, tokens) the declared, incomplete blocks should still cost; None before any is in.

        Each is expected to cost what a complete block costs on average, less
        what it has already spent (never less than nothing).
        """
        k = len(self._admitted)
        if not k:
            return None
        mean_usd = sum(self._block_usd[t] for t in self._admitted) / k
        mean_tok = sum(self._block_tokens[t] for t in self._admitted) / k
        done = set(self._admitted)
        open_ = [t for t in self._declared if t not in done]
        return (
            sum(max(mean_usd - self._block_usd[t], 0.0) for t in open_),
            sum(max(mean_tok - self._block_tokens[t], 0.0) for t in open_),
        )

    @property
    def blocks(self) -> int:
        return self.admission.admitted_blocks

    def ready(self) -> bool:
        return self.blocks >= min(ESTIMATE_AFTER, self.total_blocks)

    def estimate(self) -> dict[str, Any] | None:
        """Projection with its interval; None until enough blocks are complete."""
        if not self.ready() or not self._admitted:
            return None
        k, n = len(self._admitted), self.total_blocks
        fpc = (max(n - k, 0) / (n - 1)) ** 0.5 if n > 1 else 0.0
        out: dict[str, Any] = {"blocks": k, "of": n, "confidence": self.confidence}
        for name, source in (("usd", self._block_usd), ("tokens", self._block_tokens)):
            row = mean_interval([float(source[t]) for t in self._admitted], self.confidence)
            mean = row["mean"] * n
            if row["se"] is None:
                low = high = None
            else:
                half = (row["ci_high"] - row["mean"]) * n * fpc
                low, high = max(mean - half, 0.0), mean + half
            out[name] = mean
            out[f"{name}_low"] = low
            out[f"{name}_high"] = high
        return out


def estimate_line(est: dict[str, Any]) -> str:
    """``cost estimate for the whole run: $X [$lo, $hi] billed, N tokens [..] (...)``."""
    conf = round(100 * est["confidence"])

    def rng(lo: Any, hi: Any, fmt: Callable[[Any], str]) -> str:
        return "" if lo is None else f" [{fmt(lo)}, {fmt(hi)}]"

    tok: Callable[[Any], str] = lambda x: f"{x:,.0f}"  # noqa: E731
    return (
        f"cost estimate for the whole run: {usd(est['usd'])}"
        f"{rng(est['usd_low'], est['usd_high'], usd)} billed, "
        f"{tok(est['tokens'])}{rng(est['tokens_low'], est['tokens_high'], tok)} tokens sent "
        + (
            f"(from the first {est['blocks']} of {est['of']} task blocks; no interval yet)"
            if est["usd_low"] is None
            else f"({conf}% interval, from the first {est['blocks']} of {est['of']} task blocks)"
        )
    )
