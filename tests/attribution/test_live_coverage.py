"""Live snapshots cover too: mid-run intervals from complete task blocks admitted in order.

Episodes end in order of their length and length depends on the outcome
(a failure runs to the step limit), so a snapshot of "everything that has
ended" over-represents quick successes. The service admits only complete
task blocks, in the order the scheduler issued them (attribution.blocks).
This test replays runs through the real :class:`AttributionService`: tasks
are real per-task outcomes of the simulator (tests/data/per_task, see
tests/attribution/test_interval_coverage.py for why drawing from them is a
replication); a task's block of 16 coalition episodes is issued every time
unit, a success ends 1-6 units after its issue and a failure at the step
limit, 10-11 units after (the mechanism above, not a measured timing).
The snapshot is taken when three quarters of the episodes have ended, and
its interval must cover the pool's true phi in 93-97% of (replication,
slot) pairs, per slot at least 92%. Taking every ended episode instead
(no block admission) biases the estimate and fails.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agentbus.core.events import EventHub
from agentbus.core.outcome import Outcome
from agentbus.core.record import EpisodeRecord
from attribution.game import Game
from attribution.replicate import Pool, load_pool, shapley_by_permutations
from attribution.service import AttributionService

POOLS = Path(__file__).parents[1] / "data" / "per_task"
TASKS = 20
REPS = 500
MODEL = "sim:strong"


def one_run(pool: Pool, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
    """(ci_low, ci_high) of the snapshot at three quarters of the run; None if not estimable."""
    service = AttributionService(EventHub(), pool.slots, test_models=[MODEL], ordered=True)
    keys = Game(pool.slots)
    rows = rng.integers(0, pool.tasks, size=TASKS)
    events: list[tuple[float, int, object]] = []
    for b, row in enumerate(rows):
        task = f"task-{b}"
        cells = []
        for mask, reward in zip(pool.masks, pool.rewards[row], strict=True):
            members = tuple(sorted(keys.members(int(mask)), key=pool.slots.index))
            cell = f"{MODEL}|{keys.key(int(mask)) or '-'}|{task}|r0"
            cells.append(cell)
            record = EpisodeRecord(
                episode_id=cell,
                task_id=task,
                test_model=MODEL,
                default_model="sim:weak",
                coalition=members,
                slots=pool.slots,
                outcome=Outcome(reward=float(reward), success=reward >= 1.0),
            )
            took = rng.uniform(1, 6) if reward >= 0.5 else rng.uniform(10, 11)
            events.append((b + took, 1, record))
        events.append((float(b), 0, (b, cells, task)))
    events.sort(key=lambda e: (e[0], e[1]))
    ended, stop = 0, int(0.75 * TASKS * len(pool.masks))
    for _, kind, item in events:
        if kind == 0:
            ident, cells, task = item  # type: ignore[misc]
            service.expect(ident, cells, task)
            continue
        service.observe(item)  # type: ignore[arg-type]
        ended += 1
        if ended == stop:
            break
    est = service.estimates(MODEL)
    if est is None:
        return None
    return est.ci_low, est.ci_high


@pytest.mark.slow
@pytest.mark.parametrize("env", ["math", "tools"])
def test_mid_run_snapshot_covers_per_slot(env: str) -> None:
    pool = load_pool(POOLS / f"{env}.npz")
    truth = shapley_by_permutations(pool.mean_game(), pool.slots)
    rng = np.random.default_rng(77)
    hits = []
    for _ in range(REPS):
        interval = one_run(pool, rng)
        if interval is not None:
            low, high = interval
            hits.append((low <= truth) & (truth <= high))
    assert len(hits) >= 0.95 * REPS, "most snapshots at three quarters have an estimate"
    per_slot = np.mean(hits, axis=0)
    pooled = float(np.mean(hits))
    print(f"{env}: mid-run coverage {pooled:.3f}, per slot {np.round(per_slot, 3)}")
    assert 0.93 <= pooled <= 0.97, pooled
    assert np.all(per_slot >= 0.92), per_slot
