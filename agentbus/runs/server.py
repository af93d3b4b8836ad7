"""The live server: events over SSE and WebSocket, a JSON API and the dashboard.

Every stream is a cursor into the run's event log (:class:`RunStore`), not a
queue fed by the hub: a subscriber reads lines from its offset on, from
memory while it keeps up and from the file when it falls behind, then waits
for the next line. So a late subscriber's replay (``?from=N``) joins the live
stream with no gap and no duplicate, and a slow browser tab costs the run
nothing (it only reads the file later) and still misses nothing. SSE ids are
the events' ``seq``, so a reconnecting ``EventSource`` resumes where it was.

Security: it binds 127.0.0.1 unless told otherwise. On any other address a
bearer token is required (generated and printed when not given), as an
``Authorization: Bearer`` header, a ``?token=`` parameter (``EventSource`` and
``WebSocket`` cannot send headers) or the cookie the dashboard page sets.
Files are served only from the static directory (a fixed list) and from the
run directory, through a path check that refuses anything outside it. The
token is compared in constant time (``hmac.compare_digest``).

Defences against the browser and the network (docs/security.md):

* no CORS header is ever sent, so another site's page cannot read an answer,
  and a request whose ``Origin`` names another site is refused outright
  (a WebSocket ignores CORS; this stops cross-site WebSocket hijacking);
* request bodies are capped (:data:`MAX_BODY`; the server takes none) and
  aiohttp caps request lines and headers (8 KiB each);
* at most :data:`MAX_STREAMS` SSE/WebSocket subscribers at once (503 beyond);
* a subscriber that stops reading cannot hold anything up: its stream is a
  cursor into the log, not a queue the run fills, and a write that cannot be
  handed to the socket within :data:`WRITE_TIMEOUT_S` drops the subscriber.
"""

from __future__ import annotations

import hmac
import inspect
import secrets
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import orjson
import structlog
from aiohttp import web
from yarl import URL

from agentbus.core.coalitions import EMPTY_KEY, EMPTY_LABEL
from agentbus.core.errors import UserError
from agentbus.core.events import ATTRIBUTION_SNAPSHOT, EventHub
from agentbus.core.listener import Listener
from agentbus.core.logs import scrub_bytes
from agentbus.runs.bill import ResultsBill
from agentbus.runs.blame_marks import by_module, mark_of
from agentbus.runs.episodes import EpisodeIndex
from agentbus.runs.phi_history import PhiHistory
from agentbus.runs.run_files import EVENTS, LOCK, TEXT_SUFFIXES, safe_join
from agentbus.runs.run_state import RunState
from agentbus.runs.store import RunStore
from agentbus.runs.streams import BATCH, EventStreams, _dumps, _error, _json
from agentbus.runs.transcript import coalition_diff, transcript

log = structlog.get_logger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
COOKIE = "agentbus_token"
#: bytes of request body accepted (every route is a GET)
MAX_BODY = 64 << 10
#: SSE and WebSocket subscribers served at once
MAX_STREAMS = 64
#: seconds a write to a subscriber may wait for the socket before it is dropped
WRITE_TIMEOUT_S = 30.0
#: seconds an idle keep-alive connection is kept open
KEEPALIVE_S = 15.0
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".md": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".csv": "text/csv; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}

Attribution = Callable[[], Mapping[str, Any] | Awaitable[Mapping[str, Any]]]


class LiveServer(EventStreams, Listener):
    """aiohttp server streaming a run's events; see the module docstring."""

    def __init__(
        self,
        hub: EventHub | None,
        store: RunStore,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        attribution: Attribution | None = None,
        status: Callable[[], Mapping[str, Any]] | None = None,
        total: int | None = None,
    ) -> None:
        """Serve ``store``'s events; nothing listens until :meth:`start`.

        The application runs ``store.consume(hub)``; the server only reads the
        store (``hub`` is kept for its counters). ``attribution`` answers
        ``/api/attribution`` (sync or async; the latest snapshot event when
        None); ``status`` adds fields to ``/api/status``; ``total`` is the
        planned episode count until a ``run.started`` event says. ``token``:
        required from every client when given; generated (and printed) when
        not given and ``host`` is not loopback.
        """
        token = token or None
        self.hub = hub
        self.store = store
        self.host = host
        self.port = port
        self.generated_token = token is None and host not in LOCAL_HOSTS
        self.token = secrets.token_urlsafe(24) if self.generated_token else token
        self.attribution = attribution
        self.extra_status = status
        self.state = RunState(total)
        #: the condensed course of the estimates, for the dashboard's plot
        self.history = PhiHistory()
        #: one small row per episode, for the paginated, filtered episode list
        self.episodes = EpisodeIndex()
        #: a finished run's bill, from the results.json it wrote after run.finished
        self.bill = ResultsBill(store.run_dir)
        self.url = ""
        self._applied = 0
        self._catchup = anyio.Lock()
        self._streams: set[anyio.CancelScope] = set()
        self._stopping = False
        self.max_streams = MAX_STREAMS
        self.write_timeout_s = WRITE_TIMEOUT_S
        #: subscribers dropped because they stopped reading
        self.dropped_slow = 0

    # ---------------------------------------------------------------- lifecycle

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._auth], client_max_size=MAX_BODY)
        app.router.add_get("/", self._index)
        app.router.add_get("/static/{name}", self._static)
        app.router.add_get("/events", self._sse)
        app.router.add_get("/ws", self._ws)
        app.router.add_get("/api/status", self._status)
        app.router.add_get("/api/attribution", self._attribution)
        app.router.add_get("/api/attribution/history", self._history)
        app.router.add_get("/api/episodes", self._episode_list)
        app.router.add_get("/api/episodes/{episode_id}", self._episode)
        app.router.add_get("/api/facets", self._facets)
        app.router.add_get("/api/transcript/{episode_id}", self._transcript)
        app.router.add_get("/api/same-task/{episode_id}", self._same_task)
        app.router.add_get("/api/diff", self._diff)
        app.router.add_get("/api/flips", self._flips)
        app.router.add_get("/api/manifest", self._manifest)
        app.router.add_get("/api/blame", self._blame)
        app.router.add_get("/files/{name:.+}", self._file)
        return app

    async def start(self) -> str:
        """Listen; returns the dashboard URL (with the token when one is needed)."""
        root = await self.listen(self.app(), shutdown_timeout=2.0, keepalive_timeout=KEEPALIVE_S)
        self.url = root + "/"
        if self.token:
            self.url += f"?token={self.token}"
        if self.generated_token:
            print(f"agentbus live server token: {self.token}", file=sys.stderr, flush=True)
        log.info("server.started", host=self.host, port=self.port, token=bool(self.token))
        return self.url

    async def stop(self) -> None:
        """End every stream and close the listener."""
        self._stopping = True
        for scope in list(self._streams):
            scope.cancel()
        await super().stop()

    # ------------------------------------------------------------------- auth

    @web.middleware
    async def _auth(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if not _same_origin(request):
            return web.Response(status=403, text="403: cross-origin requests are not served")
        if self.token is None:
            # no token on loopback; but a page served from elsewhere must not
            # reach it through DNS rebinding, so the Host must name loopback
            if request.url.host not in LOCAL_HOSTS:
                return web.Response(status=403, text="403: this server answers on loopback only")
            return await handler(request)
        given = ""
        header = request.headers.get("Authorization", "")
        if header.startswith("Bearer "):
            given = header[7:].strip()
        via_query = request.query.get("token", "")
        given = given or via_query or request.cookies.get(COOKIE, "")
        if not given or not hmac.compare_digest(given.encode(), self.token.encode()):
            return web.Response(
                status=401,
                text="401: a bearer token is required (Authorization: Bearer TOKEN or ?token=)",
                headers={"WWW-Authenticate": 'Bearer realm="agentbus"'},
            )
        response = await handler(request)
        if via_query and request.path == "/" and not response.prepared:
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        return response

    # ------------------------------------------------------------------ state

    async def _state(self) -> RunState:
        """Bring the progress figures up to the end of the log (pull, no task)."""
        async with self._catchup:
            while self._applied < self.store.offset:
                stop = min(self.store.offset, self._applied + 4 * BATCH)
                for line, raw in enumerate(
                    await self.store.read_lines_async(self._applied, stop), start=self._applied
                ):
                    try:
                        event = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        continue
                    self.apply(event, line)
                self._applied = stop
        return self.state

    def apply(self, event: dict[str, Any], line: int) -> None:
        """Fold one event of the log (at ``line``) into the figures, the plot and the index."""
        self.state.apply(event)
        self.episodes.add(event, line)
        if event.get("type") == ATTRIBUTION_SNAPSHOT:
            self.history.add(event)

    def applied_up_to(self, offset: int) -> None:
        """Events before ``offset`` were handed to :meth:`apply` by their reader already."""
        self._applied = offset

    async def _status(self, request: web.Request) -> web.Response:
        state = await self._state()
        body = state.summary()
        body["offset"] = self._applied
        body["stored"] = self.store.offset
        body["resumed"] = self.store.resumed
        body["run_dir"] = self.store.run_dir.name
        # a finished run opened by agentbus.view: nothing more will come
        body["read_only"] = self.store.closed and self.hub is None
        body["episodes_indexed"] = len(self.episodes)
        body["bill"] = self.bill.get(state.finished_ts if state.finished else None)
        raw = state.snapshot_raw
        # the dashboard shows no number while the latest snapshot is not estimable
        body["phi_estimable"] = None if raw is None else raw.get("estimable")
        body["published"] = self.hub.published if self.hub is not None else None
        if self.extra_status is not None:
            body.update(self.extra_status())
        return _json(body)

    async def _attribution(self, request: web.Request) -> web.Response:
        if self.attribution is not None:
            result = self.attribution()
            if inspect.isawaitable(result):
                result = await result
            return _json(dict(result))
        state = await self._state()
        return _json(state.snapshot_raw or {"phi": []})

    async def _history(self, request: web.Request) -> web.Response:
        """The plot's points after snapshot ``?after=SEQ`` (all without it)."""
        raw_after = request.query.get("after", "")
        try:
            after = int(raw_after) if raw_after else -1
        except ValueError:
            return _error(400, f"after must be an integer, got {raw_after!r}")
        await self._state()
        return _json({"offset": self._applied, "points": self.history.since(after)})

    async def _episode(self, request: web.Request) -> web.Response:
        episode_id = request.match_info["episode_id"]
        event = await self.store.episode_event_async(episode_id)
        if event is None:
            return _error(404, f"no finished episode {episode_id!r} in this run")
        return _json(event)

    async def _episode_list(self, request: web.Request) -> web.Response:
        """One page of episodes: ``offset``, ``limit`` (at most 500) and filters."""
        q = request.query
        try:
            offset = max(0, int(q.get("offset", "0") or 0))
            limit = min(500, max(1, int(q.get("limit", "50") or 50)))
        except ValueError:
            return _error(400, "offset and limit must be integers")
        await self._state()
        coalition = q.get("coalition")
        if coalition == EMPTY_LABEL:  # the empty coalition as people write it
            coalition = EMPTY_KEY
        rows = self.episodes.select(
            task=q.get("task") or None,
            coalition=None if coalition is None or coalition == "*" else coalition,
            model=q.get("model") or None,
            outcome=q.get("outcome") or None,
            failure=q.get("failure") or None,
            newest_first=q.get("order", "newest") != "oldest",
        )
        page = rows[offset : offset + limit]
        return _json({"total": len(rows), "offset": offset, "limit": limit, "rows": page})

    async def _facets(self, request: web.Request) -> web.Response:
        await self._state()
        return _json(self.episodes.facets())

    async def _ended(self, episode_id: str) -> dict[str, Any]:
        event = await self.store.episode_event_async(episode_id)
        if event is None:
            raise web.HTTPNotFound(
                text=_dumps({"error": f"no finished episode {episode_id!r} in this run"}).decode(),
                content_type="application/json",
            )
        return event

    async def _transcript(self, request: web.Request) -> web.Response:
        event = await self._ended(request.match_info["episode_id"])
        body = transcript(event)
        mark = mark_of(self.store.run_dir, str(body.get("episode_id")))
        if mark is not None:  # python -m agentbus.blame found its decisive call
            body["blame"] = mark
        return _json(body)

    async def _blame(self, request: web.Request) -> web.Response:
        """Blamed episodes by the module of their decisive call (empty without a blame)."""
        return _json(by_module(self.store.run_dir))

    async def _same_task(self, request: web.Request) -> web.Response:
        """The other coalitions' episodes of this episode's task (diff partners)."""
        await self._state()
        row = self.episodes.get(request.match_info["episode_id"])
        if row is None:
            return _error(404, "no such episode in this run")
        return _json({"episode": row, "rows": self.episodes.same_task(row)})

    async def _diff(self, request: web.Request) -> web.Response:
        """Two episodes aligned by step: ``?a=ID&b=ID``, or ``?task=&repeat=&model=&a=&b=`` keys."""
        q = request.query
        await self._state()
        a, b = q.get("a", ""), q.get("b", "")
        if "task" in q:
            try:
                repeat = int(q.get("repeat", "0") or 0)
            except ValueError:
                return _error(400, "repeat must be an integer")
            model = q.get("model", "")
            rows = [self.episodes.cell(model, q["task"], repeat, key) for key in (a, b)]
            if rows[0] is None or rows[1] is None:
                return _error(404, "no episode of that task for one of the two coalitions")
            a, b = rows[0]["episode_id"], rows[1]["episode_id"]
        if not a or not b:
            return _error(400, "a diff needs two episodes: ?a=ID&b=ID")
        return _json(coalition_diff(await self._ended(a), await self._ended(b)))

    async def _flips(self, request: web.Request) -> web.Response:
        """Coalition pairs differing only in ``slot`` whose outcomes differ."""
        slot = request.query.get("slot", "")
        await self._state()
        if slot not in self.episodes.slots:
            return _error(400, f"unknown slot {slot!r}")
        flips = self.episodes.flips(slot, request.query.get("model") or None)
        return _json({"slot": slot, "flips": flips[:200], "total": len(flips)})

    async def _manifest(self, request: web.Request) -> web.Response:
        return _json(self.store.manifest)

    # ------------------------------------------------------------------ files

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return self._send_file(STATIC_DIR / "index.html")

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        allowed = {p.name for p in STATIC_DIR.iterdir() if p.is_file()}
        if name not in allowed:
            return _error(404, "not found")
        return self._send_file(STATIC_DIR / name)

    async def _file(self, request: web.Request) -> web.StreamResponse:
        """A results file of the run directory (never anything outside it)."""
        name = request.match_info["name"]
        try:
            path = safe_join(self.store.run_dir, name)
        except UserError:
            return _error(404, "not found")
        if path.name in (LOCK, EVENTS) or not path.is_file():
            return _error(404, "not found")
        if path.suffix in TEXT_SUFFIXES:  # written scrubbed; a file from an older run may not be
            return web.Response(
                body=scrub_bytes(path.read_bytes()),
                headers={
                    "Content-Type": CONTENT_TYPES.get(path.suffix, "text/plain"),
                    "Cache-Control": "no-cache",
                },
            )
        return self._send_file(path)

    def _send_file(self, path: Path) -> web.StreamResponse:
        ctype = CONTENT_TYPES.get(path.suffix, "application/octet-stream")
        return web.Response(
            body=path.read_bytes(),
            headers={"Content-Type": ctype, "Cache-Control": "no-cache"},
        )


def _same_origin(request: web.Request) -> bool:
    """No ``Origin`` header (not a cross-site browser request), or one naming this server."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    try:
        theirs = URL(origin)
        ours = URL(f"http://{request.host}")
    except ValueError:
        return False
    if not theirs.host or theirs.scheme not in ("http", "https"):
        return False  # "null" (sandboxed frames, file: pages) or another scheme
    return (theirs.host.lower(), theirs.port) == ((ours.host or "").lower(), ours.port)
