"""What a long run keeps in memory is bounded (the soak's RSS growth came from these two).

* the LLM cache keeps the most recently used entries only (the disk copy keeps all);
* the attribution service keeps records without their message traces (the log has them).
"""

from __future__ import annotations

from pathlib import Path

from agentbus.core.events import EventHub
from agentbus.core.outcome import Outcome
from agentbus.core.record import EpisodeRecord
from agentbus.llm.cache import CompletionCache
from agentbus.llm.types import Completion
from attribution.service import AttributionService


def completion(text: str) -> Completion:
    return Completion(text=text, model="m", prompt_tokens=1, completion_tokens=1)


def test_cache_memory_is_bounded_and_least_recently_used_goes_first(tmp_path: Path) -> None:
    cache = CompletionCache(tmp_path, max_entries=3)
    for key in "abc":
        cache.put(key, completion(key))
    assert cache.get("a") is not None  # a is now the most recently used
    cache.put("d", completion("d"))
    assert len(cache) == 3
    assert cache.get("b") is None  # the least recently used went
    assert all(cache.get(k) is not None for k in "acd")
    cache.close()
    # the disk copy has everything; reloading keeps the newest within the bound
    again = CompletionCache(tmp_path, max_entries=10)
    assert len(again) == 4 and again.get("b") is not None
    again.close()


def test_service_keeps_records_without_traces() -> None:
    trace = [{"type": "Thought", "text": "x" * 10_000}]
    record = EpisodeRecord(
        episode_id="m|planning|t1|r0",
        task_id="t1",
        test_model="m",
        coalition=("planning",),
        slots=("planning",),
        outcome=Outcome(reward=1.0, success=True, trace=trace),
    )
    service = AttributionService(EventHub(), ("planning",), test_models=["m"])
    service.observe(record)
    kept = list(service.everything.book.records())
    assert len(kept) == 1 and kept[0].outcome.trace is None
    assert kept[0].reward == 1.0
    assert record.outcome.trace == trace  # the caller's record is untouched


def test_book_keeps_counted_records_packed_and_gives_back_equal_ones() -> None:
    from agentbus.core.outcome import SlotUsage
    from agentbus.core.record import RecordBook, RecordPacker

    slots = ("planning", "reasoning", "action", "reflection")
    usage = {
        s: SlotUsage(model="m", calls=2, input_tokens=1165, output_tokens=307, cost_usd=0.0051)
        for s in slots
    }
    records = [
        EpisodeRecord(
            episode_id=f"m|{'+'.join(slots[:k])}|t{i}|r0",
            task_id=f"t{i}",
            block=i,
            test_model="m",
            default_model="d",
            coalition=slots[:k],
            slots=slots,
            assignment={s: "m" if j < k else "d" for j, s in enumerate(slots)},
            env="math",
            outcome=Outcome(
                reward=0.5,
                success=True,
                steps=3,
                latency_s=20.561056869000026,
                details={"answers": ["22"], "solved": True},
                usage=usage,
                trace=[{"type": "Thought", "text": "x" * 1000}],
            ),
        )
        for i in range(3)
        for k in range(len(slots) + 1)
    ]
    book = RecordBook()
    for record in records:
        assert book.add(record).counted
    kept = list(book.records())
    assert kept == [r.without_trace() for r in records]  # equal, in order, trace left out
    assert book.counted(records[0].episode_id) == records[0].without_trace()
    # what a cell costs the book: well under 1 KB (the pydantic objects took about 8 KB)
    packer = RecordPacker()
    packed = [packer.pack(r) for r in records]
    assert max(len(p.data) for p in packed) < 400
    assert [packer.unpack(p) for p in packed] == [r.without_trace() for r in records]
    # a later attempt replaces; the one it replaced comes back
    again = records[0].model_copy(update={"attempt": 2})
    change = book.add(again)
    assert change.counted and change.replaced == records[0].without_trace()
    assert book.counted(again.episode_id) == again.without_trace() and book.count == len(records)
