"""The run store: manifest, append-only log, repair of a torn tail, resume index."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentbus.core.errors import UserError
from agentbus.core.events import EventHub
from agentbus.runs.run_files import check_log
from agentbus.runs.store import RunStore

CONFIG = {"env": "math", "models": {"test": "sim:strong", "default": "sim:weak"}, "seed": 7}
KEYS = ["env", "models.test", "models.default", "seed"]


def ended(eid: str, *, error_kind: str | None = None, reward: float = 1.0) -> dict[str, Any]:
    outcome: dict[str, Any] = {"reward": reward, "success": reward > 0}
    if error_kind:
        outcome["error_kind"] = error_kind
        outcome["error"] = "boom"
    return {"type": "episode.ended", "episode_id": eid, "coalition": [], "outcome": outcome}


def append_bytes(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines()]


async def test_append_replay_and_seq_survive_reopen(tmp_path: Path) -> None:
    run = tmp_path / "run"
    store = RunStore.open(run, CONFIG, result_keys=KEYS)
    manifest = orjson.loads((run / "manifest.json").read_bytes())
    assert manifest["config"] == CONFIG
    assert "agentbus" in manifest["versions"] and manifest["started_at"]
    for i in range(3):
        assert await store.append(ended(f"e{i}")) == i + 1
    store.close()
    assert [e["seq"] for e in lines(run / "events.jsonl")] == [1, 2, 3]

    store = RunStore.open(run, CONFIG, result_keys=KEYS)
    assert store.resumed and store.offset == 3
    assert await store.append({"type": "run.started", "total": 5}) == 4
    events = list(store.replay())
    assert [e["seq"] for e in events] == [1, 2, 3, 4]
    assert [e["type"] for e in events][-1] == "run.started"
    assert [e["seq"] for e in store.replay(2)] == [3, 4]
    store.close()
    assert len(orjson.loads((run / "manifest.json").read_bytes())["resumes"]) == 1


async def test_completed_ids_skip_infra_errors_and_count_once(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "run", CONFIG, result_keys=KEYS)
    await store.append(ended("ok"))
    await store.append(ended("steps", error_kind="step_limit", reward=0.0))
    await store.append(ended("infra", error_kind="infra", reward=0.0))
    await store.append(ended("timeout", error_kind="timeout", reward=0.0))
    await store.append(ended("ok", reward=0.0))  # a duplicate must not replace the first
    await store.append({"type": "episode.started", "episode_id": "running"})
    assert store.completed_episode_ids() == {"ok", "steps"}
    first = store.episode_event("ok")
    assert first is not None and first["seq"] == 1
    failed = store.episode_event("infra")
    assert failed is not None and failed["outcome"]["error_kind"] == "infra"
    assert store.episode_event("running") is None
    store.close()
    again = RunStore.open(tmp_path / "run", CONFIG, result_keys=KEYS)
    assert again.completed_episode_ids() == {"ok", "steps"}
    again.close()


@pytest.mark.parametrize(
    "tail",
    [b'{"v":1,"seq":3,"type":"episode.en', b'{"v":1,"seq":3,"type":"x"}', b"\x00\x00\x00\n"],
    ids=["cut-mid-line", "no-newline", "zero-filled"],
)
async def test_truncated_last_line_is_repaired(tmp_path: Path, tail: bytes) -> None:
    run = tmp_path / "run"
    store = RunStore.open(run, CONFIG, result_keys=KEYS)
    await store.append(ended("a"))
    await store.append(ended("b"))
    store.close()
    append_bytes(run / "events.jsonl", tail)
    store = RunStore.open(run, CONFIG, result_keys=KEYS)
    assert store.repaired == len(tail)
    assert store.offset == 2 and store.completed_episode_ids() == {"a", "b"}
    assert await store.append(ended("c")) == 3
    store.close()
    assert [e["episode_id"] for e in lines(run / "events.jsonl")] == ["a", "b", "c"]


async def test_corrupt_line_in_the_middle_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    store = RunStore.open(run, CONFIG, result_keys=KEYS)
    await store.append(ended("a"))
    store.close()
    append_bytes(run / "events.jsonl", b"garbage\n" + orjson.dumps(ended("b")) + b"\n")
    with pytest.raises(UserError, match="line 2 is corrupt"):
        RunStore.open(run, CONFIG, result_keys=KEYS)


@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        (lambda log: gzip.compress(log), "gzip-compressed data"),
        (lambda log: log + bytes(range(1, 10)) * 50, "line 3 holds binary data"),
        (lambda log: log + b"\x00\x01binary\n" + b"\xff\xfe\n", "line 3 is corrupt"),
        (lambda log: b"garbage\n" + log, "line 1 is corrupt"),
    ],
    ids=["gzipped", "binary-tail", "two-bad-lines", "bad-first-line"],
)
async def test_damage_other_than_a_torn_write_is_refused_untouched(
    tmp_path: Path, damage: Callable[[bytes], bytes], needle: str
) -> None:
    """Resume and :func:`check_log` (the report's check) refuse it alike, changing nothing."""
    run = tmp_path / "run"
    store = RunStore.open(run, CONFIG, result_keys=KEYS)
    await store.append(ended("a"))
    await store.append(ended("b"))
    store.close()
    log = run / "events.jsonl"
    log.write_bytes(damage(log.read_bytes()))
    before = log.read_bytes()
    with pytest.raises(UserError, match=needle):
        RunStore.open(run, CONFIG, result_keys=KEYS)
    with pytest.raises(UserError, match=needle):
        check_log(log)
    assert log.read_bytes() == before


@pytest.mark.parametrize(
    "tail",
    [b'{"v":1,"seq":3,"type":"ep', b'{"v":1,"seq":3,"t\xc3', b'{"v":1,"s\x00\x00', b"\x00" * 9],
    ids=["cut", "cut-in-a-utf8-char", "cut-then-zeros", "zeros"],
)
def test_check_log_accepts_only_a_torn_last_line(tmp_path: Path, tail: bytes) -> None:
    log = tmp_path / "events.jsonl"
    good = orjson.dumps(ended("a")) + b"\n"
    log.write_bytes(good)
    assert check_log(log) is False
    log.write_bytes(good + tail)
    assert check_log(log) is True
    assert log.read_bytes() == good + tail


def test_manifest_difference_is_refused_naming_each_key(tmp_path: Path) -> None:
    run = tmp_path / "run"
    RunStore.open(run, CONFIG, result_keys=KEYS).close()
    changed = {**CONFIG, "env": "git", "models": {"test": "sim:strong", "default": "sim:mid"}}
    changed["concurrency"] = 64  # not a result key: allowed
    with pytest.raises(UserError) as info:
        RunStore.open(run, changed, result_keys=KEYS)
    text = str(info.value)
    assert "\n" not in text
    assert "env=math" in text and "env=git" in text
    assert "models.default=sim:weak" in text and "models.default=sim:mid" in text
    assert "seed" not in text and "use another --run-dir" in text
    fine = {**CONFIG, "concurrency": 64}
    RunStore.open(run, fine, result_keys=KEYS).close()


def test_directory_rules(tmp_path: Path) -> None:
    other = tmp_path / "home"
    other.mkdir()
    (other / "thesis.tex").write_text("precious")
    with pytest.raises(UserError, match="not empty"):
        RunStore.open(other, CONFIG, result_keys=KEYS)
    run = tmp_path / "run"
    store = RunStore.open(run, CONFIG, result_keys=KEYS)
    with pytest.raises(UserError, match="in use"):
        RunStore.open(run, CONFIG, result_keys=KEYS)
    store.close()
    RunStore.open(run, CONFIG, result_keys=KEYS).close()


def test_results_files_are_atomic_and_stay_inside(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "run", CONFIG, result_keys=KEYS)
    path = store.write_json("results/summary.json", {"phi": {"planning": 0.25}})
    assert orjson.loads(path.read_bytes()) == {"phi": {"planning": 0.25}}
    store.write_text("report.md", "# report\n")
    assert (tmp_path / "run" / "report.md").read_text() == "# report\n"
    assert not [p for p in (tmp_path / "run").rglob("*.tmp")]
    for bad in ("../escape.txt", "/etc/passwd", "a/../../b", "events.jsonl", "manifest.json"):
        with pytest.raises(UserError):
            store.write_text(bad, "x")
    assert not (tmp_path / "escape.txt").exists()
    store.close()


async def test_consume_writes_every_event_of_the_hub(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "run", CONFIG, result_keys=KEYS)
    hub = EventHub()
    async with anyio.create_task_group() as tg:
        await tg.start(lambda task_status: store.consume(hub, maxsize=4, task_status=task_status))
        for i in range(200):
            await hub.publish("episode.ended", ended(f"e{i}"))
        hub.close()
    assert store.offset == 200
    store.close()
    stored = lines(tmp_path / "run" / "events.jsonl")
    assert [e["episode_id"] for e in stored] == [f"e{i}" for i in range(200)]
    assert [e["seq"] for e in stored] == list(range(1, 201))


async def test_recent_and_old_lines_read_alike(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "run", CONFIG, result_keys=KEYS)
    n = RunStore.RING + 50
    for i in range(n):
        await store.append({"type": "tick", "i": i})
    old = await store.read_lines_async(0, 10)  # from the file
    new = await store.read_lines_async(n - 10, n)  # from memory
    assert [orjson.loads(x)["i"] for x in old] == list(range(10))
    assert [orjson.loads(x)["i"] for x in new] == list(range(n - 10, n))
    assert [e["i"] for e in store.replay()] == list(range(n))
    store.close()


async def test_odd_payload_values_do_not_kill_the_writer(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "run", CONFIG, result_keys=KEYS)
    await store.append({"type": "x", "slots": {"b"}, "where": tmp_path, "by_round": {1: 0.5}})
    (event,) = store.replay()
    assert event["slots"] == ["b"] and event["where"] == str(tmp_path)
    assert event["by_round"] == {"1": 0.5}
    store.close()
