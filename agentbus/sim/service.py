"""Start and stop a simulator as one unit: ``async with sim_service(config) as sim``.

With ``transport="http"`` the aiohttp server listens on loopback (port 0 =
a free port) and ``sim.base_url`` is the OpenAI-style base URL
(``http://127.0.0.1:PORT/v1``; Anthropic clients take ``sim.root_url``).
With ``"inprocess"`` there is no server and ``base_url`` is None. The
in-process ``sim.transport`` works in both cases and shares the same engine,
so metrics count both paths together. Requires the asyncio backend (aiohttp).

With ``config.thread`` the engine and the server run on an event loop of
their own in a thread (:mod:`agentbus.sim.worker`), so the simulator's work
never holds the caller's loop.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web

from agentbus.core.errors import UserError
from agentbus.sim.config import SimConfig
from agentbus.sim.engine import SimEngine
from agentbus.sim.faults import FaultInjector
from agentbus.sim.model import SimModel, load_experts
from agentbus.sim.ratelimit import ProviderLimiter
from agentbus.sim.server import SimServer
from agentbus.sim.serving import ServingModel
from agentbus.sim.transport import SimTransport
from agentbus.sim.worker import SimThread

log = structlog.get_logger("agentbus.sim")


@dataclass
class SimHandle:
    """A running simulator: where to reach it and how it is doing."""

    config: SimConfig
    model: SimModel
    engine: SimEngine
    transport: SimTransport
    base_url: str | None = None
    root_url: str | None = None
    port: int | None = None

    def metrics(self) -> dict[str, Any]:
        """The same JSON as GET /metrics.json."""
        return self.engine.snapshot()

    @property
    def capacity_tokens_per_s(self) -> float:
        return self.engine.serving.capacity_tokens_per_s


def build_engine(config: SimConfig, model: SimModel | None = None) -> SimEngine:
    """The engine a config describes (experts from the registry unless a model is given)."""
    if model is None:
        model = SimModel(config.profiles, load_experts(config.experts), coupled=config.coupled)
    serving = ServingModel(config)
    limiter = ProviderLimiter(config.limits, config.speed) if config.limits.active else None
    return SimEngine(model, serving, FaultInjector(config.faults), limiter)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


@asynccontextmanager
async def sim_service(
    config: SimConfig | None = None, model: SimModel | None = None
) -> AsyncIterator[SimHandle]:
    """Run a simulator for the duration of the block; stop it cleanly on exit."""
    config = config or SimConfig()
    thread = SimThread() if config.thread else None
    if thread is not None:
        thread.start()
    try:
        engine = build_engine(config, model)
        handle = SimHandle(config, engine.model, engine, SimTransport(engine, thread))
        if config.transport == "inprocess":
            yield handle
            return
        server = SimServer(engine)
        sock = _bind(config.host, config.port)
        runner = web.AppRunner(server.app, access_log=None, handle_signals=False)

        async def start() -> None:
            await runner.setup()
            await web.SockSite(runner, sock, backlog=4096).start()

        try:
            await (start() if thread is None else thread.run(start))
            port = sock.getsockname()[1]
            host = f"[{config.host}]" if ":" in config.host else config.host
            handle.port = port
            handle.root_url = f"http://{host}:{port}"
            handle.base_url = f"{handle.root_url}/v1"
            log.info(
                "sim.started",
                url=handle.base_url,
                capacity_tokens_per_s=round(engine.serving.capacity_tokens_per_s, 1),
                speed=config.speed,
            )
            yield handle
        finally:
            await (runner.cleanup() if thread is None else thread.run(runner.cleanup))
            sock.close()
    finally:
        if thread is not None:
            thread.stop()
