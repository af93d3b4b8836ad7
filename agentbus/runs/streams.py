"""The live server's event streams: SSE and WebSocket subscribers of a run's log.

Each subscriber is a cursor into the run's ``events.jsonl`` (not a queue the
run fills), read in batches from its own offset, filtered by what it asked
for (:class:`StreamFilter`) and written with a timeout, so a subscriber that
stops reading is dropped instead of holding anything up. :class:`EventStreams`
holds the two stream routes; :class:`~agentbus.runs.server.LiveServer` mixes
them in with its state, its limits and its other routes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import orjson
import structlog
from aiohttp import WSMsgType, web

from agentbus.core.coalitions import coalition_members
from agentbus.runs.snapshots import payload_key
from agentbus.runs.store import RunStore

log = structlog.get_logger(__name__)

#: seconds without a line before a subscriber gets a heartbeat
HEARTBEAT_S = 15.0
#: stored lines read from the log per batch
BATCH = 512


def _dumps(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=_dumps(data), status=status, content_type="application/json")


def _error(status: int, message: str) -> web.Response:
    return _json({"error": message}, status)


@dataclass(frozen=True, slots=True)
class StreamFilter:
    """What a subscriber asked for: a start offset and optional filters."""

    start: int | None
    types: frozenset[str] | None
    episode: str | None
    coalition: frozenset[str] | None
    trace: bool

    @classmethod
    def from_request(cls, request: web.Request) -> StreamFilter:
        q = request.query
        raw_from = request.headers.get("Last-Event-ID") or q.get("from")  # reconnects
        start: int | None = None
        if raw_from not in (None, ""):
            try:
                start = int(str(raw_from))
            except ValueError:
                raise web.HTTPBadRequest(
                    text=f"from must be an integer, got {raw_from!r}"
                ) from None
            if start < 0:
                raise web.HTTPBadRequest(text="from must be 0 or more")
        types = frozenset(t for t in q.get("type", "").split(",") if t) or None
        raw_coalition = q.get("coalition")
        coalition = None if raw_coalition is None else coalition_members(raw_coalition)
        return cls(
            start=start,
            types=types,
            episode=q.get("episode") or None,
            coalition=coalition,
            trace=q.get("trace", "") in ("1", "true", "yes"),
        )

    @property
    def passthrough(self) -> bool:
        return self.types is None and self.episode is None and self.coalition is None

    def render(self, raw: bytes) -> bytes | None:
        """The line to send (without newline), or None when filtered out."""
        if self.passthrough and (self.trace or b'"trace"' not in raw):
            return raw.rstrip(b"\n")
        try:
            event = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        if self.types is not None and event.get("type") not in self.types:
            return None
        if self.episode is not None and event.get("episode_id") != self.episode:
            return None
        if self.coalition is not None and (
            "coalition" not in event
            or coalition_members(payload_key(event["coalition"])) != self.coalition
        ):
            return None
        outcome = event.get("outcome")
        if not self.trace and isinstance(outcome, dict) and "trace" in outcome:
            outcome["traced"] = True
            del outcome["trace"]
            return _dumps(event)
        return raw.rstrip(b"\n")


class EventStreams:
    """The ``/events`` (SSE) and ``/ws`` (WebSocket) routes over a run store."""

    store: RunStore
    max_streams: int
    write_timeout_s: float
    dropped_slow: int
    _streams: set[anyio.CancelScope]
    _stopping: bool

    async def follow(self, flt: StreamFilter) -> AsyncIterator[bytes | None]:
        """Lines for one subscriber from its offset on; ``None`` = a heartbeat is due."""
        store = self.store
        cursor = store.offset if flt.start is None else min(flt.start, store.offset)
        while not self._stopping:
            if cursor < store.offset:
                stop = min(store.offset, cursor + BATCH)
                lines = await store.read_lines_async(cursor, stop)
                cursor += len(lines)
                for raw in lines:
                    out = flt.render(raw)
                    if out is not None:
                        yield out
                continue
            if store.closed:
                return
            with anyio.move_on_after(HEARTBEAT_S) as scope:
                await store.wait_beyond(cursor)
            if scope.cancelled_caught:
                yield None

    def _full(self) -> web.Response | None:
        if len(self._streams) >= self.max_streams:
            return _error(503, f"too many subscribers (at most {self.max_streams}); retry later")
        return None

    async def _sse(self, request: web.Request) -> web.StreamResponse:
        flt = StreamFilter.from_request(request)
        full = self._full()
        if full is not None:
            return full
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        with anyio.CancelScope() as scope:
            self._streams.add(scope)
            try:
                await self._send(response.write, b"retry: 2000\n\n")
                async for line in self.follow(flt):
                    if line is None:
                        await self._send(response.write, b": ping\n\n")
                        continue
                    seq = _seq_of(line)
                    head = f"id: {seq}\n".encode() if seq is not None else b""
                    await self._send(response.write, head + b"data: " + line + b"\n\n")
            except (ConnectionResetError, ConnectionError, TimeoutError):
                pass
            finally:
                self._streams.discard(scope)
        return response

    async def _send(self, write: Callable[[Any], Awaitable[Any]], data: Any) -> None:
        """One write to a subscriber; one that stopped reading is dropped (TimeoutError)."""
        with anyio.move_on_after(self.write_timeout_s) as scope:
            await write(data)
        if scope.cancelled_caught:
            self.dropped_slow += 1
            log.warning("server.slow_subscriber_dropped", after_s=self.write_timeout_s)
            raise TimeoutError("subscriber stopped reading")

    async def _ws(self, request: web.Request) -> web.StreamResponse:
        flt = StreamFilter.from_request(request)
        full = self._full()
        if full is not None:
            return full
        ws = web.WebSocketResponse(heartbeat=HEARTBEAT_S)
        await ws.prepare(request)

        async def send(scope: anyio.CancelScope) -> None:
            try:
                async for line in self.follow(flt):
                    if line is not None:
                        await self._send(ws.send_str, line.decode())
            except (ConnectionResetError, ConnectionError, TimeoutError):
                pass
            scope.cancel()

        async def receive(scope: anyio.CancelScope) -> None:
            async for msg in ws:
                if msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                    break
            scope.cancel()

        with anyio.CancelScope() as outer:
            self._streams.add(outer)
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(send, tg.cancel_scope)
                    tg.start_soon(receive, tg.cancel_scope)
            finally:
                self._streams.discard(outer)
        if not ws.closed:
            with anyio.move_on_after(2):
                await ws.close()
        return ws


def _seq_of(line: bytes) -> int | None:
    """The ``seq`` of a stored line, without parsing it all (it is written early)."""
    at = line.find(b'"seq":')
    if at < 0:
        return None
    end = at + 6
    while end < len(line) and line[end : end + 1].isdigit():
        end += 1
    digits = line[at + 6 : end]
    return int(digits) if digits else None
