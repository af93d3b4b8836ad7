"""What a long run keeps in memory is bounded (the soak's RSS growth came from these two).

* the LLM cache keeps the most recently used entries only (the disk copy keeps all);
* the attribution service keeps records without their message traces (the log has them).
"""

from __future__ import annotations

from pathlib import Path

from agentbus.events import EventHub
from agentbus.llm.cache import CompletionCache
from agentbus.llm.types import Completion
from agentbus.outcome import Outcome
from agentbus.record import EpisodeRecord
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
