"""``python -m agentbus.view RUN_DIR [RUN_DIR ...]``: the dashboard for finished runs.

Each run is opened read-only (:class:`~agentbus.runs.runlog.ReadOnlyStore`)
and served by the same :class:`~agentbus.runs.server.LiveServer` the live run
uses, under ``/runs/N/``; the page is the live dashboard showing the run's
final state, with its episode list, transcripts and coalition diffs served
page by page from an index of the log. With two or more runs the front page
is the run comparison (``/compare.html``: per slot and per coalition, each
run's value and the paired difference over shared tasks).

It binds 127.0.0.1 unless told otherwise (``--host``; another address needs
the token the server prints, as for ``--serve``). Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from aiohttp import web

from agentbus.core.errors import UserError
from agentbus.core.listener import Listener
from agentbus.runs.comparison import compare_runs
from agentbus.runs.pipes import pipe_safe
from agentbus.runs.runlog import ReadOnlyStore
from agentbus.runs.server import STATIC_DIR, LiveServer, _error, _json


class Viewer(Listener):
    """One aiohttp server for one or more finished runs (see the module docstring)."""

    def __init__(
        self,
        run_dirs: Sequence[Path],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
    ) -> None:
        if not run_dirs:
            raise UserError("name at least one run directory")
        self.stores = [ReadOnlyStore.prepare(Path(d)) for d in run_dirs]
        # the first server's auth (token, loopback Host check) guards everything
        self.servers = [
            LiveServer(None, store, host=host, port=port, token=token) for store in self.stores
        ]
        self._scanned = False
        token = self.servers[0].token
        for server in self.servers[1:]:
            server.token = token
        self.front = self.servers[0]
        self.host, self.port = host, port
        self.url = ""

    def app(self) -> web.Application:
        root = web.Application(middlewares=[self.front._auth])
        root.router.add_get("/", self._home)
        root.router.add_get("/compare.html", self._compare_page)
        root.router.add_get("/static/{name}", self.front._static)
        root.router.add_get("/api/runs", self._runs)
        root.router.add_get("/api/compare", self._compare)
        for i, server in enumerate(self.servers):
            root.add_subapp(f"/runs/{i}", server.app())
        return root

    async def _home(self, request: web.Request) -> web.StreamResponse:
        target = "compare.html" if len(self.servers) > 1 else "runs/0/"
        raise web.HTTPFound(self._keep_token(request, target))

    async def _slash(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(self._keep_token(request, request.path + "/"))

    @staticmethod
    def _keep_token(request: web.Request, target: str) -> str:
        token = request.query.get("token")
        return target + (f"?token={token}" if token else "")

    async def _compare_page(self, request: web.Request) -> web.StreamResponse:
        return self.front._send_file(STATIC_DIR / "compare.html")

    async def _runs(self, request: web.Request) -> web.Response:
        return _json(
            [
                {"index": i, "name": s.store.run_dir.name, "path": str(s.store.run_dir)}
                for i, s in enumerate(self.servers)
            ]
        )

    async def _compare(self, request: web.Request) -> web.Response:
        try:
            a = int(request.query.get("a", "0"))
            b = int(request.query.get("b", "1"))
            servers = self.servers[a], self.servers[b]
        except (ValueError, IndexError):
            return _error(400, f"a and b must name two of the {len(self.servers)} runs (0-based)")
        for server in servers:
            await server._state()
        result: dict[str, Any] = compare_runs(servers[0].episodes, servers[1].episodes)
        result["run_a"] = servers[0].store.run_dir.name
        result["run_b"] = servers[1].store.run_dir.name
        return _json(result)

    async def start(self) -> str:
        """Index the runs (when :meth:`prepare` has not) and listen; returns the URL."""
        await self.prepare()
        self.url = await self.listen(self.app(), shutdown_timeout=2.0) + "/"
        if self.front.token:
            self.url += f"?token={self.front.token}"
        return self.url

    async def prepare(self) -> float:
        """Read and index every run now, one pass over each log; returns the seconds it took."""
        began = time.perf_counter()
        if not self._scanned:
            for store, server in zip(self.stores, self.servers, strict=True):
                await anyio.to_thread.run_sync(store.scan, server.apply)
                server.applied_up_to(store.offset)
                # the log as it was: a run that had not finished adds nothing more here
                server.state.interrupted = not server.state.finished
            self._scanned = True
        return time.perf_counter() - began


async def serve(args: argparse.Namespace) -> None:
    viewer = Viewer(args.run_dirs, host=args.host, port=args.port, token=args.token)
    took = await viewer.prepare()
    url = await viewer.start()
    episodes = sum(len(s.episodes) for s in viewer.servers)
    print(
        f"indexed {episodes} episodes from {len(viewer.servers)} run(s) in {took:.1f}s",
        flush=True,
    )
    print(f"agentbus view: {url}  (Ctrl-C to stop)", flush=True)
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):
            await viewer.stop()


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentbus.view",
        allow_abbrev=False,  # --tok would set --token under another name
        description="Open finished runs in the browser dashboard (read-only, from their logs). "
        "Two or more runs open on their comparison.",
    )
    parser.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: any free one)")
    parser.add_argument("--token", default=None, help="bearer token (generated off loopback)")
    args = parser.parse_args(argv)
    if not 0 <= args.port < 65536:
        print(f"error: port out of range: {args.port}", file=sys.stderr)
        return 2
    try:
        anyio.run(serve, args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
