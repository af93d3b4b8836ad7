"""A stand-in HTTP service on a free loopback port, for tests that need a real socket.

Several tests put an aiohttp app in front of the code under test (a provider that
answers with an error, an agent service, a vLLM that streams): they need the app
listening on a port nobody else holds, its URL, and the runner cleaned up however
the test ends. ``aiohttp.test_utils.TestServer`` does the same but turns on handler
cancellation, which changes what a stand-in sees when the client hangs up; this
keeps aiohttp's defaults, so a stand-in behaves as a real server would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web


@asynccontextmanager
async def serving(app: web.Application, **runner_options: Any) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1 and a free port; yields ``http://127.0.0.1:PORT``.

    ``runner_options`` go to :class:`aiohttp.web.AppRunner` (``access_log=None`` ...).
    """
    runner = web.AppRunner(app, **runner_options)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
