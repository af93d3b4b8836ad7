"""The condensed course of the estimates behind the dashboard's plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import anyio

from agentbus.core.events import EventHub
from agentbus.runs.phi_history import PhiHistory, condense
from agentbus.runs.server import LiveServer
from agentbus.runs.store import RunStore

SLOTS = ("planning", "action")


def snap(seq: int, episodes: int, *, estimable: bool | None = True) -> dict[str, Any]:
    shapley = None
    if estimable is not False:
        shapley = {
            s: {"value": 0.1 * (i + 1), "ci_low": 0.0, "ci_high": 0.3} for i, s in enumerate(SLOTS)
        }
    event: dict[str, Any] = {
        "type": "attribution.snapshot",
        "seq": seq,
        "episodes": episodes,
        "models": {
            "sim:strong": {
                "shapley": shapley,
                "not_estimable": None if shapley else "2 coalitions have no episodes",
            }
        },
    }
    if estimable is not None:
        event.update(estimable=estimable, reason=None if estimable else "waiting for task t0001")
    return event


def test_not_estimable_carries_no_numbers_and_says_why() -> None:
    point = condense(snap(3, 0, estimable=False))
    assert point["estimable"] is False and point["models"] == {}
    assert point["reason"] == "waiting for task t0001"
    # even if a payload had numbers, estimable=False wins
    lying = snap(4, 16)
    lying["estimable"] = False
    assert condense(lying)["models"] == {}


def test_older_payloads_fall_back_to_shapley_being_null() -> None:
    old = snap(5, 10, estimable=None)
    point = condense(old)
    assert point["estimable"] is True
    assert point["models"]["sim:strong"]["action"] == [0.2, 0.0, 0.3]
    empty = snap(6, 10, estimable=None)
    empty["models"]["sim:strong"] = {"shapley": None, "not_estimable": "no data"}
    point = condense(empty)
    assert point["estimable"] is False and "no data" in point["reason"]


def test_history_skips_repeats_and_answers_since() -> None:
    history = PhiHistory()
    history.add(snap(1, 0, estimable=False))
    history.add(snap(2, 16))
    history.add(snap(3, 16))  # same data: nothing new to draw
    history.add(snap(4, 32))
    assert [p["seq"] for p in history.points] == [1, 2, 4]
    assert [p["seq"] for p in history.since(2)] == [4]
    assert len(history.since(-1)) == 3


def test_long_runs_are_thinned_but_keep_the_recent_detail() -> None:
    history = PhiHistory(cap=100)
    for i in range(1, 1001):
        history.add(snap(i, 16 * i))
    assert len(history.points) <= 100
    seqs = [p["seq"] for p in history.points]
    assert seqs == sorted(seqs) and seqs[-1] == 1000
    assert seqs[-10:] == list(range(991, 1001))


async def test_the_live_server_answers_the_course_and_the_estimable_flag(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "run", {"env": "math"}, result_keys=["env"])
    hub = EventHub()
    server = LiveServer(hub, store, host="127.0.0.1", port=0)
    try:
        async with anyio.create_task_group() as tg, aiohttp.ClientSession() as session:
            await tg.start(store.consume, hub)
            await server.start()
            url = f"http://127.0.0.1:{server.port}"
            await hub.publish("attribution.snapshot", snap(0, 0, estimable=False))
            await anyio.sleep(0.1)
            async with session.get(url + "/api/status") as resp:
                assert (await resp.json())["phi_estimable"] is False
            for blocks in (1, 2):
                await hub.publish("attribution.snapshot", snap(0, 16 * blocks))
            await anyio.sleep(0.1)
            async with session.get(url + "/api/attribution/history") as resp:
                points = (await resp.json())["points"]
            assert [p["estimable"] for p in points] == [False, True, True]
            async with session.get(
                url + f"/api/attribution/history?after={points[1]['seq']}"
            ) as resp:
                assert [p["episodes"] for p in (await resp.json())["points"]] == [32]
            async with session.get(url + "/api/attribution/history?after=x") as resp:
                assert resp.status == 400
            await server.stop()
            hub.close()
    finally:
        store.close()
