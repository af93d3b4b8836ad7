"""The live server's defences: token check, paths, CORS and Origin, sizes, limits, slow readers.

Requests go over real sockets, several of them written byte by byte (a
client library would normalise the paths a traversal attack relies on).
"""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import anyio.lowlevel
import pytest

import agentbus.runs.server as server_module
from agentbus.core.events import EventHub
from agentbus.runs.server import LiveServer
from agentbus.runs.store import RunStore

SECRET = "TOP-SECRET-CONTENT-OUTSIDE-THE-RUN-DIR"


@asynccontextmanager
async def serving(run_dir: Path, **kw: Any) -> AsyncIterator[tuple[RunStore, LiveServer]]:
    store = RunStore.open(run_dir, {"env": "demo"}, result_keys=["env"])
    hub = EventHub()
    server = LiveServer(hub, store, host="127.0.0.1", port=0, **kw)
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(store.consume, hub)
            await server.start()
            try:
                yield store, server
            finally:
                await server.stop()
                hub.close()
    finally:
        store.close()


async def raw(server: LiveServer, request: bytes, read: bool = True) -> bytes:
    """Send ``request`` as written; the whole answer (the server closes after it)."""
    stream = await anyio.connect_tcp("127.0.0.1", server.port)
    request = request.replace(b"Host: 127.0.0.1\r\n", f"Host: 127.0.0.1:{server.port}\r\n".encode())
    async with stream:
        await stream.send(request)
        data = b""
        if read:
            with anyio.move_on_after(5):
                while True:
                    try:
                        chunk = await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        break
                    data += chunk
        return data


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``condition`` (server-side state no event announces) until it holds."""
    with anyio.fail_after(timeout):
        for _ in iter(int, 1):
            if condition():
                return
            await anyio.sleep(0.01)


def get(path: str, *headers: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


async def test_token_is_compared_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = server_module.hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(server_module.hmac, "compare_digest", counting)
    async with serving(tmp_path / "run", token="right-token-123") as (_, server):
        for wrong in ("x", "right-token-124", "right-token-123-and-more"):
            answer = await raw(server, get("/api/status", f"Authorization: Bearer {wrong}"))
            assert status(answer) == 401
        answer = await raw(server, get("/api/status", "Authorization: Bearer right-token-123"))
        assert status(answer) == 200
    assert len(calls) == 4, "every token check must go through hmac.compare_digest"


@pytest.mark.parametrize(
    "path",
    [
        "/files/../secret.txt",
        "/files/%2e%2e/secret.txt",
        "/files/..%2fsecret.txt",
        "/files/%2e%2e%2fsecret.txt",
        "/files/sub/../../secret.txt",
        "/files//tmp/../secret.txt",
        "/files/link.txt",
        "/files/linkdir/secret.txt",
        "/static/..%2f..%2fsecret.txt",
        "/static/%2e%2e/server.py",
        "/files/events.jsonl",
        "/files/.lock",
        "/files/%00secret.txt",
        "/../secret.txt",
    ],
)
async def test_no_file_outside_the_run_directory_is_served(path: str, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text(SECRET)
    run_dir = tmp_path / "run"
    async with serving(run_dir) as (store, server):
        store.write_text("results.md", "ok")
        (run_dir / "link.txt").symlink_to(tmp_path / "secret.txt")
        (run_dir / "linkdir").symlink_to(tmp_path)
        answer = await raw(server, get(path))
        assert SECRET.encode() not in answer
        assert b"def _same_origin" not in answer  # the server's own source
        assert status(answer) in (400, 403, 404), answer[:200]
        # the legitimate file next to them is served
        assert (await raw(server, get("/files/results.md"))).endswith(b"ok")


async def test_cors_is_closed_and_foreign_origins_are_refused(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (_, server):
        own = f"http://127.0.0.1:{server.port}"
        ok = await raw(server, get("/api/status", f"Origin: {own}"))
        assert status(ok) == 200 and b"access-control-allow" not in ok.lower()
        for origin in ("http://evil.example", f"http://127.0.0.1:{server.port + 1}", "null"):
            answer = await raw(server, get("/api/status", f"Origin: {origin}"))
            assert status(answer) == 403, origin
            assert b"access-control-allow" not in answer.lower()
        preflight = (
            b"OPTIONS /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            b"Origin: http://evil.example\r\nAccess-Control-Request-Method: GET\r\n\r\n"
        )
        answer = await raw(server, preflight)
        assert status(answer) >= 400 and b"access-control-allow" not in answer.lower()
        # a WebSocket ignores CORS: the Origin check is what stops a foreign page
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.WSServerHandshakeError) as info:
                await session.ws_connect(
                    f"http://127.0.0.1:{server.port}/ws", headers={"Origin": "http://evil.example"}
                )
            assert info.value.status == 403
            ws = await session.ws_connect(
                f"http://127.0.0.1:{server.port}/ws?from=0", headers={"Origin": own}
            )
            await ws.close()


async def test_request_size_limits(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (_, server):
        body = b"x" * (server_module.MAX_BODY * 4)
        post = (
            f"POST /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        assert status(await raw(server, post)) in (405, 413)
        huge_header = get("/api/status", "X-Filler: " + "a" * 20_000)
        assert status(await raw(server, huge_header)) in (400, 431)
        long_line = get("/api/episodes/" + "a" * 20_000)
        assert status(await raw(server, long_line)) in (400, 414)
        assert status(await raw(server, get("/api/status"))) == 200  # still serving


async def test_subscriber_limit(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (store, server):
        server.max_streams = 2
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{server.port}/events"
            first = await session.get(url)
            second = await session.get(url)
            await until(lambda: len(server._streams) == 2)
            third = await session.get(url)
            assert third.status == 503
            assert "too many subscribers" in await third.text()
            first.close()
            # a gone subscriber is noticed at its next write (an event or a heartbeat)
            with anyio.fail_after(5):
                while len(server._streams) > 1:
                    await store.append({"type": "note"})
                    await anyio.sleep(0.05)
            fourth = await session.get(url)
            assert fourth.status == 200
            second.close()
            fourth.close()


async def test_a_subscriber_that_never_reads_cannot_stall_the_run(tmp_path: Path) -> None:
    async with serving(tmp_path / "run") as (store, server):
        server.write_timeout_s = 0.5
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.sendall(get("/events?from=0"))  # ... and never reads a byte
        try:
            await until(lambda: bool(server._streams))
            padding = "p" * 4000
            start = time.perf_counter()
            for i in range(3000):  # 12 MB: far more than the socket buffers hold
                await store.append({"type": "note", "i": i, "text": padding})
                if i % 500 == 0:
                    await anyio.lowlevel.checkpoint()
            assert time.perf_counter() - start < 10, "writing the log was held up"
            async with aiohttp.ClientSession() as session:
                with anyio.fail_after(5):
                    async with session.get(f"http://127.0.0.1:{server.port}/api/status") as resp:
                        assert resp.status == 200
                        assert (await resp.json())["stored"] == 3000
            await until(lambda: not server._streams, timeout=10)
            assert server.dropped_slow == 1
        finally:
            sock.close()
