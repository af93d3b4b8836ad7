"""Client CPU over HTTP: agentbus's LLM client against bare clients, same requests, one run.

Issue 53 item 2. The simulator serves from a child process (its CPU is not
ours; ``llm_bench.SimServer``), and this process's CPU (``time.process_time``)
is what each arm costs:

1. **End to end.** The full 16-coalition PRAF math evaluation (``evaluate``,
   default ``weak``, test ``strong``) over HTTP, twice in the same process:
   through agentbus's lean OpenAI-compatible client (the ``vllm:`` path,
   :mod:`agentbus.llm.backends.openai_fast`) and through the official SDK
   (``AsyncOpenAI`` over its aiohttp transport, the path before issue 53).
   CPU per episode is the difference of two runs (``--tasks`` and twice as
   many), so the run's set-up (plan, run directory, report) drops out.
2. **Same requests, client alone.** The requests the first run really sent
   (after shared calls) are replayed, at the same concurrency, by: agentbus's
   LLM layer (``LLMRouter``: limits, retries, accounting, the lean client;
   cache off, so every request is sent), a bare ``AsyncOpenAI`` with one
   shared aiohttp pool, and raw ``aiohttp`` posting ``json.dumps`` bodies.
   CPU per request, and per episode (x the sent calls per episode).

Ratios last: agentbus's client over the faster bare client (target <= 1.3x),
and the SDK path over the lean one.

``--loop uvloop`` runs everything on uvloop (what ``python -m agentbus.run``
uses where it is installed: ``pip install 'agentbus[uvloop]'``), every arm alike.

Run: ``python benchmarks/client_cpu.py [--tasks 6] [--speed 50] [--concurrency 64]
[--loop asyncio|uvloop]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
import openai

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_bench import (
    CaptureBackend,
    Sent,
    ServerSpec,
    SimServer,
    install_capture,
    quiet_logs,
    run_agentbus,
)

from agentbus import registry
from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.http_module import http_module
from agentbus.llm.router import LLMRouter

TARGET_MS_PER_EPISODE = 10.0
TARGET_RATIO = 1.3
#: replay rounds, arms interleaved; each arm's best is kept (a loaded machine's noise)
ROUNDS = 3


class CaptureSDK(CaptureBackend):
    """The capture backend forced onto the official SDK (the path before issue 53)."""

    name: ClassVar[str] = "capture_sdk"

    def setup(self) -> None:
        super().setup()
        self._fast = None


async def end_to_end(url: str, tasks: int, backend: str) -> tuple[float, int, list[Sent]]:
    """(CPU seconds, episodes, requests sent) of one evaluation through ``backend``."""
    CaptureBackend.log = []
    with tempfile.TemporaryDirectory() as tmp:
        cpu = time.process_time()
        run = await run_agentbus(url, tasks, Path(tmp) / "run", backend=backend, plots=False)
        cpu = time.process_time() - cpu
    episodes = int(run.report.episodes_run)
    return cpu, episodes, list(CaptureBackend.log)


def body(r: Sent) -> dict[str, Any]:
    """The JSON body the vLLM path sends for ``r`` (the same for every arm)."""
    out: dict[str, Any] = {
        "model": r.model,
        "messages": [{"role": m["role"], "content": m["content"]} for m in r.messages],
        "temperature": r.params.temperature,
        "top_p": r.params.top_p,
        "max_tokens": r.params.max_tokens,
    }
    if r.params.seed is not None:
        out["seed"] = r.params.seed
    if r.params.stop:
        out["stop"] = list(r.params.stop)
    out.update(r.params.extra)
    return out


async def replay(
    sent: Sequence[Sent], concurrency: int, call: Callable[[Sent], Awaitable[str]]
) -> float:
    """CPU seconds to send every request with ``concurrency`` in flight (answers checked)."""
    gate = asyncio.Semaphore(concurrency)
    texts: list[str] = []

    async def one(r: Sent) -> None:
        async with gate:
            texts.append(await call(r))

    cpu = time.process_time()
    await asyncio.gather(*(one(r) for r in sent))
    cpu = time.process_time() - cpu
    if len(texts) != len(sent):
        raise RuntimeError("a replayed request got no answer")
    return cpu


async def replay_arms(url: str, sent: Sequence[Sent], concurrency: int) -> dict[str, float]:
    """CPU seconds per arm for the same requests, interleaved ROUNDS times, the best kept."""
    limits = EndpointLimits(max_concurrency=concurrency)
    router = LLMRouter(LLMConfig(cache="off", limits=limits))
    clients: dict[str, Any] = {}

    async def agentbus_arm(r: Sent) -> str:
        client = clients.get(r.model)
        if client is None:
            client = clients[r.model] = router.client(f"vllm:{url}#{r.model}")
        return (await client.complete(r.messages, r.params)).text

    sdk = openai.AsyncOpenAI(
        base_url=url,
        api_key="bench",
        max_retries=0,
        http_client=openai.DefaultAioHttpClient(
            limits=http_module(openai).Limits(
                max_connections=concurrency, max_keepalive_connections=concurrency
            )
        ),
    )

    async def sdk_arm(r: Sent) -> str:
        b = body(r)
        reply = await sdk.chat.completions.create(
            model=b.pop("model"), messages=b.pop("messages"), **b
        )
        return reply.choices[0].message.content or ""

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))
    post_url = url.rstrip("/") + "/chat/completions"
    headers = {"Authorization": "Bearer bench", "Content-Type": "application/json"}

    async def aiohttp_arm(r: Sent) -> str:
        async with session.post(post_url, data=json.dumps(body(r)), headers=headers) as resp:
            data = await resp.json()
        return str(data["choices"][0]["message"]["content"])

    arms = {"agentbus": agentbus_arm, "AsyncOpenAI": sdk_arm, "aiohttp": aiohttp_arm}
    best: dict[str, float] = {}
    # The heap the evaluations left (sympy, the run's objects) out of the collector's
    # way, as a run's own steady_gc does: a full collection of it costs about 0.1 ms
    # per replayed request and fell on whichever arm happened to be running.
    gc.collect()
    gc.freeze()
    try:
        for _ in range(ROUNDS):
            for name, call in arms.items():
                cpu = await replay(sent, concurrency, call)
                best[name] = min(best.get(name, cpu), cpu)
    finally:
        gc.unfreeze()
        await router.aclose()
        await sdk.close()
        await session.close()
    return best


async def measure(args: argparse.Namespace) -> int:
    install_capture()
    if "capture_sdk" not in registry.names("backends"):
        registry.register("backends", "capture_sdk", CaptureSDK)
    spec = ServerSpec(tasks=args.tasks, speed=args.speed, max_num_seqs=256)
    with SimServer(spec) as server:
        print(f"{server.describe()}; this process's loop: {args.loop}")
        # warm-up: imports, the math workers, the first connections
        await end_to_end(server.url, 1, "capture")
        lean_small, small_eps, _ = await end_to_end(server.url, args.tasks, "capture")
        sdk_small, _, _ = await end_to_end(server.url, args.tasks, "capture_sdk")
        lean_cpu, episodes, sent = await end_to_end(server.url, 2 * args.tasks, "capture")
        sdk_cpu, _, _ = await end_to_end(server.url, 2 * args.tasks, "capture_sdk")
        per_episode = len(sent) / episodes
        extra = max(1, episodes - small_eps)
        lean_ms = (lean_cpu - lean_small) * 1000 / extra
        sdk_ms = (sdk_cpu - sdk_small) * 1000 / extra
        print(
            f"end to end: {small_eps} and {episodes} PRAF episodes, {len(sent)} requests sent "
            f"in the larger run ({per_episode:.1f} per episode); CPU of the extra episodes:"
        )
        print(f"  agentbus, lean client:      {lean_ms:6.2f} ms CPU per episode")
        print(f"  agentbus, official SDK:     {sdk_ms:6.2f} ms CPU per episode")
        best = await replay_arms(server.url, sent, args.concurrency)
    print(
        f"same {len(sent)} requests, {args.concurrency} in flight, client alone (best of {ROUNDS}):"
    )
    for name, cpu in best.items():
        per_req = cpu * 1000 / len(sent)
        print(
            f"  {name:<12} {per_req:6.3f} ms CPU per request = "
            f"{per_req * per_episode:6.2f} ms per episode"
        )
    bare = min(best["AsyncOpenAI"], best["aiohttp"])
    faster = "aiohttp" if best["aiohttp"] <= best["AsyncOpenAI"] else "AsyncOpenAI"
    met = "met" if lean_ms <= TARGET_MS_PER_EPISODE else "NOT met"
    print(
        f"ratio end-to-end CPU per episode / target {TARGET_MS_PER_EPISODE:g} ms: "
        f"{lean_ms / TARGET_MS_PER_EPISODE:.2f}x ({met})"
    )
    print(f"ratio official SDK / lean client, end to end: {sdk_ms / lean_ms:.2f}x")
    ratio = best["agentbus"] / bare
    print(
        f"ratio agentbus client / faster bare client ({faster}): {ratio:.2f}x "
        f"(target <= {TARGET_RATIO:g}x: {'met' if ratio <= TARGET_RATIO else 'NOT met'})"
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=6, help="math tasks (x16 coalitions)")
    ap.add_argument("--speed", type=float, default=50.0, help="simulator time scale")
    ap.add_argument("--concurrency", type=int, default=64, help="replay: requests in flight")
    ap.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio")
    args = ap.parse_args()
    quiet_logs()
    if args.loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            print("uvloop is not installed (pip install 'agentbus[uvloop]')", file=sys.stderr)
            return 2
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(measure(args))
    return asyncio.run(measure(args))


if __name__ == "__main__":
    raise SystemExit(main())
