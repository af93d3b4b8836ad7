"""The work queue's window: task blocks in order, opened gradually, retries first.

The window is what makes live estimates arrive early (whole blocks, in order)
without holding the server back; benchmarks/saturation.py measures the cost
of its shape, and these tests pin the shape itself.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio

from agentbus.app.workqueue import RAMP, Block, WorkQueue
from agentbus.core.environment import Task
from agentbus.core.episode import EpisodeSpec
from agentbus.core.outcome import Outcome
from agentbus.core.record import EpisodeRecord

CELLS = 4  # coalitions per block


def blocks(n: int) -> Iterator[Block]:
    for b in range(n):
        task = Task(id=f"t{b}", env="demo", instruction="")
        specs = tuple(
            EpisodeSpec(f"m|c{c}|t{b}|r0", task, object, [])  # type: ignore[arg-type]
            for c in range(CELLS)
        )
        yield Block(cells=tuple(s.episode_id for s in specs), specs=specs, task=task.id)


def record(spec: EpisodeSpec, *, counts: bool = True, error: str | None = None) -> EpisodeRecord:
    outcome = Outcome(reward=0.0, success=False, error_kind=error) if error else Outcome(reward=1.0)
    return EpisodeRecord(
        episode_id=spec.episode_id,
        task_id=spec.task.id,
        attempt=spec.attempt,
        counts=counts,
        block=spec.block,
        outcome=outcome,
    )


async def take(queue: WorkQueue, n: int) -> list[EpisodeSpec]:
    """The next ``n`` specs the queue hands out without blocking (fewer if it would wait)."""
    out: list[EpisodeSpec] = []
    it = queue.__aiter__()
    for _ in range(n):
        with anyio.move_on_after(0.2):
            out.append(await it.__anext__())
            continue
        break
    await it.aclose()  # type: ignore[attr-defined]
    return out


async def test_window_opens_by_ended_episodes_in_block_order() -> None:
    queue = WorkQueue(blocks(20), window=9, start=2)
    first = await take(queue, 100)
    # two blocks to start, task-major
    assert [s.block for s in first] == [0] * CELLS + [1] * CELLS
    assert queue.width == 2
    # one block's worth of ended episodes (not a settled block: one of each of
    # the first two blocks' cells is still running) opens RAMP more blocks
    for spec in first[:3] + first[CELLS : CELLS + 1]:
        queue.settle(spec, record(spec))
    assert queue.settled_blocks == 0
    assert queue.width == 2 + RAMP
    more = await take(queue, 100)
    assert sorted({s.block for s in more}) == list(range(2, 2 + RAMP))
    # the window never passes its bound, however much has ended
    queue.ended_cells += 1000
    assert queue.width == 9


async def test_a_failed_attempt_is_retried_ahead_of_new_work() -> None:
    queue = WorkQueue(blocks(3), window=1, start=1, max_attempts=2)
    first = await take(queue, 100)
    assert len(first) == CELLS
    failed = first[0]
    queue.settle(failed, record(failed, counts=False, error="infra"))
    for spec in first[1:]:
        queue.settle(spec, record(spec))
    again = await take(queue, 1)
    assert again[0].episode_id == failed.episode_id and again[0].attempt == 2
    queue.settle(again[0], record(again[0], counts=False, error="infra"))  # out of tries
    assert queue.given_up == [failed.episode_id]
    nxt = await take(queue, 1)
    assert nxt[0].block == 1
