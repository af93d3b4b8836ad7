"""EventHub policies and the plugin registry."""

from __future__ import annotations

import anyio
import pytest

from agentbus.core import registry
from agentbus.core.errors import UserError
from agentbus.core.events import EventHub


async def test_hub_skips_work_when_nobody_listens() -> None:
    hub = EventHub()
    assert not hub.wants("episode.ended")
    assert await hub.publish("episode.ended", {"x": 1}) is None
    assert hub.published == 0


async def test_drop_policy_counts_and_block_policy_waits() -> None:
    hub = EventHub()
    fast = hub.subscribe(["tick"], maxsize=2, policy="drop")
    slow = hub.subscribe(["tick"], maxsize=2, policy="block")
    published = 0

    async def publisher() -> None:
        nonlocal published
        for i in range(10):
            await hub.publish("tick", {"i": i})
            published += 1

    async with anyio.create_task_group() as tg:
        tg.start_soon(publisher)
        await anyio.sleep(0.01)
        assert published == 2  # blocked by the full 'block' subscriber
        got = [(await slow.get()).data["i"] for _ in range(10)]
    assert got == list(range(10))
    assert fast.dropped == 8 and fast.delivered == 2
    assert [(await fast.get()).data["i"] for _ in range(2)] == [0, 1]


async def test_filters_and_unsubscribe() -> None:
    hub = EventHub()
    sub = hub.subscribe(["a", "b"], where=lambda e: e.data.get("keep", False))
    await hub.publish("a", {"keep": True})
    await hub.publish("b", {"keep": False})
    await hub.publish("c", {"keep": True})
    assert len(sub.mailbox) == 1
    event = await sub.get()
    assert event.to_json()["v"] == 1 and event.to_json()["type"] == "a"
    sub.close()
    assert not hub.wants("a")
    with pytest.raises(ValueError):
        hub.subscribe(policy="lossy")  # type: ignore[arg-type]


def test_registry_loads_entry_points_and_local_plugins() -> None:
    assert registry.get("environments", "math").__name__ == "MathEnvironment"
    # the countdown fixture is imported by tests, not offered as a plugin
    assert "demo" not in registry.names("environments")
    sentinel = object()
    registry.register("modules", "test.sentinel", sentinel)
    try:
        assert registry.get("modules", "test.sentinel") is sentinel
    finally:
        registry.unregister("modules", "test.sentinel")


def test_registry_errors_are_clear() -> None:
    with pytest.raises(UserError, match=r"unknown environment 'nope'; available: .*math"):
        registry.get("environments", "nope")
    with pytest.raises(UserError, match="unknown plugin group"):
        registry.get("widgets", "x")
