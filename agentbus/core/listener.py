"""An aiohttp application listening on one host and port: start, stop, ``async with``.

The gateway, the live dashboard and the viewer of finished runs each serve
one application. Listening on port 0 takes a free port, which the caller then
needs to know (its URL is handed to agents and printed to users); a port that
is taken or an address that cannot be bound is one :class:`UserError` line,
not a traceback.
"""

from __future__ import annotations

from typing import Any, Self

from aiohttp import web

from agentbus.core.errors import UserError


class Listener:
    """Base of a server that listens on ``host``:``port``; subclasses define :meth:`start`."""

    host: str
    port: int
    _runner: web.AppRunner | None = None

    async def listen(
        self, app: web.Application, site_args: dict[str, Any] | None = None, **runner_args: Any
    ) -> str:
        """Serve ``app``; ``http://host:port``, the port the one actually bound."""
        runner = web.AppRunner(app, access_log=None, **runner_args)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, **(site_args or {}))
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise UserError(f"cannot serve on {self.host}:{self.port}: {exc.strerror}") from None
        self._runner = runner
        sockets = getattr(site._server, "sockets", None) or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> str:
        raise NotImplementedError

    async def stop(self) -> None:
        """Close the listener (subclasses end their own work first)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


__all__ = ["Listener"]
