"""The completion cache: keys, in-flight coalescing, errors to every waiter, disk persistence.

The upstream here is a small counting stand-in for a model server (not our
code); the router tests run the same cache against the real simulator.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import orjson
import pytest

from agentbus.core.errors import InfraError, UserError
from agentbus.llm.cache import FILENAME, CompletionCache, cache_key
from agentbus.llm.types import ChatMessage, Completion, SamplingParams

MSGS: list[ChatMessage] = [
    {"role": "system", "content": "You are the planning module of an LLM agent."},
    {"role": "user", "content": "## Task\nadd 2 and 2"},
]


class CountingUpstream:
    """Answers after a short delay and counts the calls it received."""

    def __init__(self, fail: bool = False, delay: float = 0.05) -> None:
        self.calls = 0
        self.fail = fail
        self.delay = delay

    async def __call__(self) -> Completion:
        self.calls += 1
        await anyio.sleep(self.delay)
        if self.fail:
            raise InfraError("upstream down")
        return Completion(text=f"answer {self.calls}", model="m", prompt_tokens=5)


def test_key_covers_backend_model_messages_and_params() -> None:
    p = SamplingParams()
    base = cache_key("sim", "weak", MSGS, p)
    assert base == cache_key("sim", "weak", [dict(m) for m in MSGS], SamplingParams())  # type: ignore[misc]
    variants = [
        cache_key("vllm", "weak", MSGS, p),
        cache_key("sim", "strong", MSGS, p),
        cache_key("sim", "weak", [*MSGS[:1], {"role": "user", "content": "x"}], p),
        cache_key("sim", "weak", [{"role": "user", "content": MSGS[0]["content"]}, MSGS[1]], p),
        cache_key("sim", "weak", MSGS, SamplingParams(seed=1)),
        cache_key("sim", "weak", MSGS, SamplingParams(max_tokens=7)),
        cache_key("sim", "weak", MSGS, SamplingParams(stop=("x",))),
        cache_key("sim", "weak", MSGS, SamplingParams(extra={"top_k": 5})),
    ]
    assert len({base, *variants}) == len(variants) + 1


async def test_identical_concurrent_calls_go_upstream_once() -> None:
    cache = CompletionCache()
    upstream = CountingUpstream()
    results: list[tuple[Completion, str]] = []

    async def one() -> None:
        results.append(await cache.get_or_call("k", upstream))

    async with anyio.create_task_group() as tg:
        for _ in range(25):
            tg.start_soon(one)
    assert upstream.calls == 1
    sources = sorted(s for _, s in results)
    assert sources.count("sent") == 1 and sources.count("coalesced") == 24
    assert {c.text for c, _ in results} == {"answer 1"}
    assert [c.cached for c, s in results if s == "sent"] == [False]
    # later: a plain hit
    again, source = await cache.get_or_call("k", upstream)
    assert source == "hit" and again.cached and again.text == "answer 1"
    assert upstream.calls == 1


async def test_an_error_reaches_every_waiter_and_is_not_cached() -> None:
    cache = CompletionCache()
    upstream = CountingUpstream(fail=True)
    errors: list[BaseException] = []

    async def one() -> None:
        try:
            await cache.get_or_call("k", upstream)
        except InfraError as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        for _ in range(10):
            tg.start_soon(one)
    assert upstream.calls == 1
    assert len(errors) == 10 and all("upstream down" in str(e) for e in errors)
    assert cache.get("k") is None
    upstream.fail = False
    _result, source = await cache.get_or_call("k", upstream)
    assert source == "sent" and upstream.calls == 2


async def test_a_cancelled_leader_hands_the_call_to_a_waiter() -> None:
    cache = CompletionCache()
    upstream = CountingUpstream(delay=0.2)
    got: list[str] = []

    async def follower() -> None:
        await anyio.sleep(0.01)
        _result, source = await cache.get_or_call("k", upstream)
        got.append(source)

    async with anyio.create_task_group() as tg:
        tg.start_soon(follower)
        with anyio.move_on_after(0.05):
            await cache.get_or_call("k", upstream)
    assert got == ["sent"]
    assert upstream.calls == 2


async def test_disk_cache_survives_restart_and_a_truncated_last_line(tmp_path: Path) -> None:
    cache = CompletionCache(tmp_path)
    upstream = CountingUpstream(delay=0)
    for key in ("a", "b"):
        await cache.get_or_call(key, upstream)
    cache.close()
    path = tmp_path / FILENAME
    # a crash in the middle of writing the next entry
    with path.open("ab") as f:
        f.write(b'{"k":"c","c":{"text":"half')

    reopened = CompletionCache(tmp_path)
    assert reopened.loaded == 2 and reopened.skipped_lines == 1
    hit, source = await reopened.get_or_call("a", upstream)
    assert source == "hit" and hit.text == "answer 1" and hit.prompt_tokens == 5
    await reopened.get_or_call("c", upstream)
    reopened.close()

    lines = path.read_bytes().splitlines()
    assert orjson.loads(lines[-1])["k"] == "c"  # the new entry sits on a line of its own
    third = CompletionCache(tmp_path)
    assert third.loaded == 3
    third.close()


def test_unusable_cache_dir_is_a_user_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(UserError, match="cannot use LLM cache directory"):
        CompletionCache(blocker / "sub")
