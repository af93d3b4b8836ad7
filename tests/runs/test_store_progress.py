"""Progress figures, snapshot reading, the console display, and shutdown safety."""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentbus.core.events import EventHub
from agentbus.runs.progress import Progress
from agentbus.runs.run_state import RunState
from agentbus.runs.snapshots import normalize_snapshot
from agentbus.runs.store import RunStore

SLOTS = ["planning", "reasoning", "action", "reflection"]


def ended(eid: str, coalition: list[str], reward: float, **outcome: Any) -> dict[str, Any]:
    return {
        "type": "episode.ended",
        "episode_id": eid,
        "test_model": "sim:strong",
        "coalition": coalition,
        "outcome": {"reward": reward, "success": reward > 0, "prompt_tokens": 10, **outcome},
    }


def test_reads_the_attribution_service_snapshot_shape() -> None:
    snap = {
        "slots": SLOTS,
        "episodes": 96,
        "models": {
            "sim:strong": {
                "coalitions": {"": {"n": 6, "mean": 0.3}},
                "shapley": {
                    "planning": {"value": 0.1, "se": 0.05, "ci_low": 0.0, "ci_high": 0.2},
                    "action": {"value": -0.02, "se": 0.01},
                },
            },
            "sim:mid": {"coalitions": {}, "shapley": None, "failures": 2},
        },
    }
    rows = normalize_snapshot(snap)
    assert rows[0] == {"slot": "planning", "phi": 0.1, "lo": 0.0, "hi": 0.2, "model": "sim:strong"}
    assert rows[1]["slot"] == "action" and rows[1]["lo"] == pytest.approx(-0.02 - 1.96 * 0.01)
    assert len(rows) == 2


def test_reads_the_live_attribution_service() -> None:
    service_mod = pytest.importorskip("attribution.service")
    service = service_mod.AttributionService(EventHub(), SLOTS)
    for task in range(4):
        for mask in range(16):
            coalition = [s for k, s in enumerate(SLOTS) if mask >> k & 1]
            reward = float((task + mask) % 3 == 0 or "planning" in coalition)
            service.observe(
                {
                    **ended(f"{task}-{mask}", coalition, reward),
                    "task_id": f"t{task}",
                    "default_model": "sim:weak",
                    "slots": SLOTS,
                    "repeat": 0,
                }
            )
    rows = normalize_snapshot(orjson.loads(orjson.dumps(service.snapshot(), option=1 << 4)))
    assert sorted(r["slot"] for r in rows) == sorted(SLOTS)
    planning = next(r for r in rows if r["slot"] == "planning")
    assert planning["lo"] <= planning["phi"] <= planning["hi"] and planning["phi"] > 0.2


@pytest.mark.parametrize(
    "payload",
    [
        {"phi": {"planning": 0.3}, "ci": {"planning": [0.1, 0.5]}},
        {"phi": {"planning": {"phi": 0.3, "lo": 0.1, "hi": 0.5}}},
        {"estimates": [{"slot": "planning", "value": 0.3, "ci": [0.1, 0.5]}]},
        {"shapley": {"phi": {"planning": 0.3}, "se": {"planning": 0.2 / 1.96}}},
    ],
)
def test_reads_other_snapshot_shapes(payload: dict[str, Any]) -> None:
    (row,) = normalize_snapshot(payload)
    assert row["slot"] == "planning" and row["phi"] == 0.3
    assert row["lo"] == pytest.approx(0.1) and row["hi"] == pytest.approx(0.5)


def test_unknown_snapshot_shape_gives_nothing() -> None:
    assert normalize_snapshot({"slots": SLOTS, "weird": 1}) == []


def test_run_state_counts_each_episode_once() -> None:
    state = RunState(done=5)
    state.apply({"type": "run.started", "total": 20, "ts": 100.0, "seq": 1})
    state.apply({**ended("a", ["planning"], 1.0), "ts": 101.0, "seq": 2})
    state.apply({**ended("b", [], 0.0, completion_tokens=5), "ts": 102.0, "seq": 3})
    state.apply({**ended("a", ["planning"], 1.0), "ts": 103.0, "seq": 4})  # duplicate
    state.apply({**ended("c", [], 0.0, error_kind="infra"), "ts": 104.0, "seq": 5})
    state.apply({**ended("d", [], 0.0, error_kind="step_limit"), "ts": 105.0, "seq": 6})
    s = state.summary(now=110.0)
    assert (s["total"], s["done"], s["done_this_process"], s["errors"]) == (20, 8, 3, 1)
    assert s["offset"] == 6 and s["prompt_tokens"] == 50 and s["completion_tokens"] == 5
    # the rate counts counted episodes once (a, b, d): not the duplicate, not the infra failure
    assert s["episodes_per_s"] == pytest.approx(3 / 10)
    rows = {r["key"]: r for r in s["coalitions"]}
    assert rows["planning"]["n"] == 1 and rows["planning"]["mean_reward"] == 1.0
    assert rows[""]["n"] == 2 and rows[""]["errors"] == 1
    assert [r["episode_id"] for r in s["recent"]] == ["d", "c", "a", "b", "a"]
    assert "episodes 8/20" in state.line(now=110.0)


async def progress_output(plain: bool, publish: Callable[[EventHub], Awaitable[None]]) -> str:
    """What a 4-episode progress display (refreshing every 0.05 s) wrote while ``publish``
    fed its hub, until the hub closed."""
    hub = EventHub()
    out = io.StringIO()
    progress = Progress(hub, 4, plain=plain, interval_s=0.05, file=out)
    async with anyio.create_task_group() as tg:
        await tg.start(progress.run)
        await publish(hub)
        hub.close()
    return out.getvalue()


async def test_plain_progress_prints_lines_and_a_final_one() -> None:
    async def publish(hub: EventHub) -> None:
        await hub.publish("episode.ended", ended("a", ["planning"], 1.0))
        await anyio.sleep(0.2)
        await hub.publish("episode.ended", ended("b", [], 0.0))
        await hub.publish(
            "attribution.snapshot", {"phi": {"planning": 0.25}, "ci": {"planning": [0.1, 0.4]}}
        )
        await hub.publish("run.finished", {})

    lines = (await progress_output(True, publish)).splitlines()
    assert any(line.startswith("episodes 1/4") for line in lines[:-1])
    assert lines[-1].startswith("episodes 2/4") and lines[-1].endswith("finished")
    assert "planning=+0.250[+0.100,+0.400]" in lines[-1]


async def test_rich_progress_renders_without_a_terminal_error() -> None:
    async def publish(hub: EventHub) -> None:
        await hub.publish("episode.ended", ended("a", ["planning"], 1.0))
        await hub.publish("attribution.snapshot", {"phi": {"planning": 0.25}})
        await anyio.sleep(0.15)

    text = await progress_output(False, publish)
    assert "episodes" in text and "1/4" in text and "planning" in text


async def test_cancelled_writer_still_stores_what_was_published(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "run", {"env": "demo"}, result_keys=["env"])
    hub = EventHub()
    async with anyio.create_task_group() as tg:
        await tg.start(store.consume, hub)
        for i in range(10):
            await hub.publish("episode.ended", ended(f"e{i}", [], 1.0))
        await hub.publish("run.finished", {"episodes": 10})
        hub.close()
        tg.cancel_scope.cancel()  # what an application does at the end of a run
    store.close()
    stored = [orjson.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_bytes().split()]
    assert [e["type"] for e in stored][-1] == "run.finished" and len(stored) == 11


def test_manifest_never_stores_secrets(tmp_path: Path) -> None:
    config = {"env": "demo", "token": "hunter2", "llm": {"endpoints": [{"api_key": "sk-1"}]}}
    RunStore.open(tmp_path / "run", config, result_keys=["env", "llm"]).close()
    text = (tmp_path / "run" / "manifest.json").read_text()
    assert "hunter2" not in text and "sk-1" not in text
    # the same config (secrets included) still resumes
    RunStore.open(tmp_path / "run", config, result_keys=["env", "llm"]).close()
