"""The live server on loopback: SSE and WebSocket streams, replay, filters, API, auth."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import orjson
import pytest
from anyio.abc import Process
from yarl import URL

from agentbus.core.events import EventHub
from agentbus.runs.server import LiveServer
from agentbus.runs.store import RunStore

SLOTS = ["planning", "reasoning", "action", "reflection"]


def ended(i: int, *, trace: bool = False) -> dict[str, Any]:
    coalition = [s for k, s in enumerate(SLOTS) if i >> k & 1]
    outcome: dict[str, Any] = {
        "reward": float(i % 2),
        "success": bool(i % 2),
        "steps": 3,
        "prompt_tokens": 100,
        "completion_tokens": 20,
    }
    if trace:
        outcome["trace"] = [{"type": "Thought", "sender": "reasoning", "seq": 1, "text": "hm"}]
    return {
        "episode_id": f"ep{i}",
        "task_id": f"t{i % 3}",
        "coalition": coalition,
        "slots": SLOTS,
        "repeat": 0,
        "outcome": outcome,
    }


@asynccontextmanager
async def serving(
    run_dir: Path, *, host: str = "127.0.0.1", token: str | None = None, **kw: Any
) -> AsyncIterator[tuple[EventHub, RunStore, LiveServer]]:
    store = RunStore.open(run_dir, {"env": "demo"}, result_keys=["env"])
    hub = EventHub()
    server = LiveServer(hub, store, host=host, port=0, token=token, **kw)
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(store.consume, hub)
            await server.start()
            try:
                yield hub, store, server
            finally:
                await server.stop()
                hub.close()
    finally:
        store.close()


@asynccontextmanager
async def tail_lines(cmd: list[str], lines: int) -> AsyncIterator[tuple[Process, bytes]]:
    """Start ``cmd`` (a tail) and read its stdout until it has printed ``lines`` lines (20 s at
    most); the process is still running inside the block, and is closed after it."""
    async with await anyio.open_process(cmd) as proc:
        assert proc.stdout is not None
        out = b""
        with anyio.fail_after(20):
            while out.count(b"\n") < lines:
                out += await proc.stdout.receive()
        yield proc, out


def base(server: LiveServer) -> str:
    return f"http://{server.host}:{server.port}"


async def read_sse(resp: aiohttp.ClientResponse, n: int) -> list[dict[str, Any]]:
    """The next ``n`` events of an SSE response (checking that ``id`` = ``seq``)."""
    events: list[dict[str, Any]] = []
    ident: int | None = None
    with anyio.fail_after(10):
        async for line in resp.content:
            line = line.rstrip(b"\n")
            if line.startswith(b"id: "):
                ident = int(line[4:])
            elif line.startswith(b"data: "):
                event = orjson.loads(line[6:])
                assert event["seq"] == ident
                events.append(event)
                if len(events) == n:
                    break
    return events


async def publish(hub: EventHub, start: int, stop: int, pause: float = 0.0) -> None:
    for i in range(start, stop):
        await hub.publish("episode.ended", ended(i))
        if pause:
            await anyio.sleep(pause)


async def test_sse_streams_live_events_in_order(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (hub, _store, server), aiohttp.ClientSession() as s:
        async with s.get(base(server) + "/events") as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("text/event-stream")
            async with anyio.create_task_group() as tg:
                tg.start_soon(publish, hub, 0, 100)
                events = await read_sse(resp, 100)
    assert [e["seq"] for e in events] == list(range(1, 101))
    assert [e["episode_id"] for e in events] == [f"ep{i}" for i in range(100)]


@pytest.mark.parametrize("start", [0, 37, 120])
async def test_sse_replay_joins_live_without_gap_or_duplicate(tmp_path: Path, start: int) -> None:
    async with serving(tmp_path / "run") as (hub, store, server), aiohttp.ClientSession() as s:
        await publish(hub, 0, 120)
        async with anyio.create_task_group() as tg:
            tg.start_soon(publish, hub, 120, 300, 0.001)  # live events keep coming meanwhile
            async with s.get(base(server) + f"/events?from={start}") as resp:
                events = await read_sse(resp, 300 - start)
        assert store.offset == 300
    assert [e["seq"] for e in events] == list(range(start + 1, 301))


async def test_sse_reconnect_resumes_after_last_event_id(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (hub, _store, server), aiohttp.ClientSession() as s:
        await publish(hub, 0, 30)
        headers = {"Last-Event-ID": "25"}
        async with s.get(base(server) + "/events?from=0", headers=headers) as resp:
            events = await read_sse(resp, 5)
    assert [e["seq"] for e in events] == [26, 27, 28, 29, 30]


async def test_websocket_replay_then_live_in_order(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (hub, _store, server), aiohttp.ClientSession() as s:
        await publish(hub, 0, 50)
        async with s.ws_connect(base(server) + "/ws?from=10") as ws:
            got: list[dict[str, Any]] = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(publish, hub, 50, 150, 0.001)
                with anyio.fail_after(10):
                    while len(got) < 140:
                        got.append(orjson.loads(await ws.receive_str()))
    assert [e["seq"] for e in got] == list(range(11, 151))


async def test_filters_by_type_episode_and_coalition(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (hub, _store, server), aiohttp.ClientSession() as s:
        for i in range(16):
            await hub.publish("episode.started", {"episode_id": f"ep{i}"})
            await hub.publish("episode.ended", ended(i))
        await hub.publish("attribution.snapshot", {"phi": {"planning": 0.1}})
        url = base(server) + "/events?from=0&type=episode.ended&coalition=reasoning%2Bplanning"
        async with s.get(url) as resp:
            (only,) = await read_sse(resp, 1)
        assert only["episode_id"] == "ep3" and only["type"] == "episode.ended"
        async with s.ws_connect(base(server) + "/ws?from=0&episode=ep5") as ws:
            first = orjson.loads(await ws.receive_str())
            second = orjson.loads(await ws.receive_str())
        assert (first["type"], second["type"]) == ("episode.started", "episode.ended")
        assert first["episode_id"] == second["episode_id"] == "ep5"
        types = "episode.ended,attribution.snapshot"
        async with s.get(base(server) + f"/events?from=29&type={types}") as resp:
            tail = await read_sse(resp, 3)
        assert [e["type"] for e in tail] == ["episode.ended"] * 2 + ["attribution.snapshot"]
        async with s.get(base(server) + "/events?from=x") as resp:
            assert resp.status == 400


async def test_traces_stay_out_of_the_stream_but_the_episode_api_has_them(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (hub, _store, server), aiohttp.ClientSession() as s:
        await hub.publish("episode.ended", ended(1, trace=True))
        async with s.get(base(server) + "/events?from=0") as resp:
            (light,) = await read_sse(resp, 1)
        assert "trace" not in light["outcome"] and light["outcome"]["traced"] is True
        async with s.get(base(server) + "/events?from=0&trace=1") as resp:
            (full,) = await read_sse(resp, 1)
        assert full["outcome"]["trace"][0]["text"] == "hm"
        async with s.get(base(server) + "/api/episodes/ep1") as resp:
            body = await resp.json()
        assert body["outcome"]["trace"][0]["type"] == "Thought"
        async with s.get(base(server) + "/api/episodes/nope") as resp:
            assert resp.status == 404


async def test_status_and_attribution_api(tmp_path: Path) -> None:
    calls = 0

    def estimates() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        return {"phi": {"planning": 0.3}, "ci": {"planning": [0.1, 0.5]}}

    async with (
        serving(tmp_path / "run", attribution=estimates) as (hub, _store, server),
        aiohttp.ClientSession() as s,
    ):
        await hub.publish("run.started", {"total": 32})
        await publish(hub, 0, 16)
        await hub.publish("episode.ended", {**ended(99), "outcome": {"error_kind": "infra"}})
        async with s.get(base(server) + "/api/status") as resp:
            status = await resp.json()
        assert status["total"] == 32 and status["done"] == 16 and status["errors"] == 1
        assert status["offset"] == 18 and status["prompt_tokens"] == 1600
        assert len(status["coalitions"]) == 16 and len(status["recent"]) == 17
        assert status["recent"][0]["error_kind"] == "infra"
        async with s.get(base(server) + "/api/attribution") as resp:
            assert (await resp.json())["ci"] == {"planning": [0.1, 0.5]}
        assert calls == 1
        async with s.get(base(server) + "/") as resp:
            assert resp.status == 200 and "phi-chart" in await resp.text()
        async with s.get(base(server) + "/static/app.js") as resp:
            assert resp.status == 200 and "EventSource" in await resp.text()


async def test_remote_address_requires_a_bearer_token(tmp_path: Path) -> None:
    async with serving(tmp_path / "run", host="127.0.0.2") as (hub, _store, server):
        assert server.token and server.generated_token
        assert server.url.endswith(f"?token={server.token}")
        await publish(hub, 0, 3)
        root = base(server)
        async with aiohttp.ClientSession() as s:
            closed = ("/", "/static/app.js", "/events?from=0", "/api/status", "/api/attribution")
            for path in closed:
                async with s.get(root + path) as resp:
                    assert resp.status == 401, path
            async with s.get(root + "/api/status?token=wrong") as resp:
                assert resp.status == 401
            bad = {"Authorization": "Bearer wrong"}
            async with s.get(root + "/api/status", headers=bad) as resp:
                assert resp.status == 401
            with pytest.raises(aiohttp.WSServerHandshakeError) as info:
                await s.ws_connect(root + "/ws")
            assert info.value.status == 401
            good = {"Authorization": f"Bearer {server.token}"}
            async with s.get(root + "/api/status", headers=good) as resp:
                assert resp.status == 200 and (await resp.json())["done"] == 3
            async with s.get(root + f"/events?from=0&token={server.token}") as resp:
                assert len(await read_sse(resp, 3)) == 3
            async with s.ws_connect(root + f"/ws?from=2&token={server.token}") as ws:
                assert orjson.loads(await ws.receive_str())["seq"] == 3
        # the dashboard page sets a cookie, so its script and streams need no header
        jar = aiohttp.CookieJar(unsafe=True)
        async with aiohttp.ClientSession(cookie_jar=jar) as s:
            async with s.get(server.url) as resp:
                assert resp.status == 200
            async with s.get(root + "/static/app.js") as resp:
                assert resp.status == 200


async def test_explicit_token_is_enforced_even_on_localhost(tmp_path: Path) -> None:
    async with (
        serving(tmp_path / "run", token="s3cret") as (_hub, _store, server),
        aiohttp.ClientSession() as s,
    ):
        assert not server.generated_token
        async with s.get(base(server) + "/api/status") as resp:
            assert resp.status == 401
        async with s.get(base(server) + "/api/status?token=s3cret") as resp:
            assert resp.status == 200


async def test_no_endpoint_reads_outside_the_run_dir(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    async with serving(tmp_path / "run") as (_hub, store, server), aiohttp.ClientSession() as s:
        store.write_json("results/summary.json", {"ok": True})
        root = base(server)
        async with s.get(root + "/files/results/summary.json") as resp:
            assert resp.status == 200 and (await resp.json()) == {"ok": True}
        attempts = [
            "/files/../secret.txt",
            "/files/..%2Fsecret.txt",
            "/files/%2e%2e/secret.txt",
            "/files/%2e%2e%2fsecret.txt",
            "/files/results/..%2F..%2Fsecret.txt",
            "/files//etc/passwd",
            "/files/%2Fetc%2Fpasswd",
            "/files/.lock",
            "/files/events.jsonl",
            "/static/..%2Fstore.py",
            "/static/%2e%2e%2fserver.py",
            "/static/../../agentbus/runs/store.py",
            "/api/episodes/..%2F..%2Fsecret.txt",
            "/../secret.txt",
        ]
        for path in attempts:
            async with s.get(URL(root + path, encoded=True)) as resp:
                text = await resp.text()
                assert resp.status in (400, 404), (path, resp.status)
                assert "top secret" not in text and "root:" not in text
                assert "def safe_join" not in text


async def test_tail_cli_prints_the_filtered_stream(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (hub, _store, server):
        for i in range(5):
            await hub.publish("episode.started", {"episode_id": f"ep{i}"})
            await hub.publish("episode.ended", ended(i))
        await hub.publish("attribution.snapshot", {"phi": {"planning": 0.25}})
        cmd = [sys.executable, "-m", "agentbus.tail", base(server) + "/", "--from", "0"]
        cmd += ["--type", "episode.ended", "--type", "attribution.snapshot"]
        async with tail_lines(cmd, 6) as (proc, out):
            await server.stop()  # the stream ends: tail exits cleanly
            with anyio.fail_after(10):
                rc = await proc.wait()
        assert rc == 0
    rows = out.decode().splitlines()
    assert len(rows) == 6
    assert all("episode.ended" in r for r in rows[:5]) and "ep3" in rows[3]
    assert "reward=1.00 ok" in rows[1] and "[planning]" in rows[1]
    assert "attribution.snapshot" in rows[5] and "planning=+0.250" in rows[5]


async def test_tail_cli_unreachable_is_one_line_and_exit_2() -> None:
    with anyio.fail_after(30):
        result = await anyio.run_process(
            [sys.executable, "-m", "agentbus.tail", "http://127.0.0.1:9/"], check=False
        )
    assert result.returncode == 2
    err = result.stderr.decode().strip()
    assert len(err.splitlines()) == 1 and "cannot reach http://127.0.0.1:9" in err
    assert result.stdout == b""


async def test_a_subscriber_far_behind_reads_the_file_and_misses_nothing(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (hub, store, server), aiohttp.ClientSession() as s:
        store.RING = 8  # keep only 8 lines in memory: the replay must come from the file
        await publish(hub, 0, 100)
        async with anyio.create_task_group() as tg:
            tg.start_soon(publish, hub, 100, 150, 0.001)
            async with s.get(base(server) + "/events?from=0") as resp:
                events = await read_sse(resp, 150)
    assert [e["seq"] for e in events] == list(range(1, 151))


async def test_loopback_server_refuses_foreign_host_headers(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (_hub, _store, server), aiohttp.ClientSession() as s:
        async with s.get(base(server) + "/api/status", headers={"Host": "evil.example"}) as resp:
            assert resp.status == 403
        async with s.get(base(server) + "/api/status", headers={"Host": "localhost"}) as resp:
            assert resp.status == 200


async def test_tail_cli_passes_the_token_and_explains_a_401(tmp_path: Path) -> None:
    async with serving(tmp_path / "run", host="127.0.0.2") as (hub, _store, server):
        await publish(hub, 0, 2)
        bare = await anyio.run_process(
            [sys.executable, "-m", "agentbus.tail", base(server)], check=False
        )
        assert bare.returncode == 2 and b"needs a token" in bare.stderr
        cmd = [sys.executable, "-m", "agentbus.tail", server.url, "--from", "0", "--json"]
        async with tail_lines(cmd, 2) as (proc, out):
            proc.terminate()
            await proc.wait()
    assert [orjson.loads(x)["seq"] for x in out.splitlines()] == [1, 2]
