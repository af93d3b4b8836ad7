"""Saturation: agentbus's request throughput vs a raw load generator, same server, same prompts.

The simulated server runs in its own process at realistic speed (speed 1)
with its default serving model; its capacity (output tokens/s at a full
batch) is printed. Two arms, each against a freshly started server (cold
prefix cache for both):

* agentbus: the full 16-coalition math evaluation (sim weak default, sim
  strong test) through ``agentbus.app.evaluate``, models reached over HTTP
  with ``AsyncOpenAI`` (the vLLM backend, the production path), 1,000
  episodes in flight, per-endpoint limit 64 (the default). The shared-call
  cache stays on (its default): only requests that actually went upstream
  are counted and replayed, so both arms do the same upstream work.
* raw: ``AsyncOpenAI`` alone (same SDK, same aiohttp transport, same pool
  size) replays exactly the requests agentbus sent, in the order it sent
  them, with the same concurrency per endpoint (64 per model), no agent
  logic and no dependencies between requests.

Throughput = requests / (first request sent -> last answer received) in both
arms. Target: agentbus >= 0.9x raw. Also reported: output tokens/s as a
fraction of the server's capacity.

Run: ``python benchmarks/saturation.py [--tasks N]`` (default 10 tasks = 160
episodes; about 2 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import anyio

# Import installed packages, never scripts that sit beside this file.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

sys.path.append(str(_HERE))

from llm_bench import (  # noqa: E402
    CaptureBackend,
    Sent,
    ServerSpec,
    SimServer,
    install_capture,
    mean_in_flight,
    middle_rate,
    quiet_logs,
    run_agentbus,
    window,
)

ENDPOINT_LIMIT = 64  # agentbus's default per-endpoint concurrency (EndpointLimits)


async def raw_replay(url: str, sent: list[Sent], per_model: int) -> list[Sent]:
    """Replay ``sent`` with AsyncOpenAI, ``per_model`` in flight per model.

    Returns the replayed requests with their own timing and usage.
    """
    import httpx2
    import openai
    from openai import AsyncOpenAI

    by_model: dict[str, list[Sent]] = {}
    for record in sent:
        by_model.setdefault(record.model, []).append(record)
    done: list[Sent] = []

    async def worker(client: AsyncOpenAI, queue: list[Sent]) -> None:
        while queue:
            r = queue.pop()
            mine = Sent(r.model, r.messages, r.params, time.perf_counter())
            kwargs: dict[str, Any] = {
                "temperature": r.params.temperature,
                "top_p": r.params.top_p,
                "max_tokens": r.params.max_tokens,
            }
            if r.params.seed is not None:
                kwargs["seed"] = r.params.seed
            resp = await client.chat.completions.create(
                model=r.model,
                messages=cast(
                    Any, [{"role": m["role"], "content": m["content"]} for m in r.messages]
                ),
                **kwargs,
            )
            mine.end = time.perf_counter()
            mine.completion_tokens = resp.usage.completion_tokens if resp.usage else 0
            done.append(mine)

    clients = [
        AsyncOpenAI(
            api_key="bench",
            base_url=url,
            max_retries=0,
            http_client=openai.DefaultAioHttpClient(
                limits=httpx2.Limits(
                    max_connections=per_model, max_keepalive_connections=per_model
                ),
                timeout=300.0,
            ),
        )
        for _ in by_model
    ]
    try:
        async with anyio.create_task_group() as tg:
            for client, records in zip(clients, by_model.values(), strict=True):
                queue = list(reversed(records))  # pop() takes them in sent order
                for _ in range(per_model):
                    tg.start_soon(worker, client, queue)
    finally:
        for client in clients:
            await client.close()
    return done


def figures(records: list[Sent]) -> tuple[float, float, float, float, str]:
    """(req/s, tokens/s, steady req/s, mean in flight, one printable line)."""
    seconds = window(records)
    rps = len(records) / seconds
    tok = sum(r.completion_tokens for r in records) / seconds
    steady = middle_rate([r.end for r in records])
    flight = mean_in_flight(records)
    line = (
        f"  {len(records)} requests in {seconds:.1f} s: {rps:.1f} req/s "
        f"({steady:.1f} req/s between the 10th and 90th percentile answers), "
        f"{tok:,.0f} output tokens/s, {flight:.0f} requests in flight on average"
    )
    return rps, tok, steady, flight, line


async def main(tasks: int, speed: float, plots: bool = True) -> None:
    quiet_logs()
    install_capture()
    spec = ServerSpec(tasks=tasks, speed=speed)
    with tempfile.TemporaryDirectory() as tmp:
        with SimServer(spec) as server:
            print(server.describe())
            capacity = server.capacity
            print(f"agentbus: full 16-coalition math evaluation, {tasks} tasks, concurrency 1000")
            run = await run_agentbus(server.url, tasks, Path(tmp) / "run", plots=plots)
        sent = list(CaptureBackend.log)
        llm = run.report.results["llm"]["total"]
        print(
            f"  {run.report.episodes_run} episodes in {run.wall_s:.1f} s (whole run); "
            f"LLM calls requested {llm['requested']}, sent {llm['sent']}"
        )
        ours_rps, ours_tok, ours_steady, _, line = figures(sent)
        print(line)
        with SimServer(spec) as server:
            print(f"raw: AsyncOpenAI replays the {len(sent)} sent requests, {ENDPOINT_LIMIT}/model")
            replayed = await raw_replay(server.url, sent, ENDPOINT_LIMIT)
        raw_rps, raw_tok, raw_steady, _, line = figures(replayed)
        print(line)
    print(f"server capacity: {capacity:,.0f} output tokens/s")
    print(
        f"tokens/s fraction of capacity: agentbus {ours_tok / capacity:.2f}, "
        f"raw {raw_tok / capacity:.2f}"
    )
    print(f"ratio steady-state throughput agentbus/raw: {ours_steady / raw_steady:.2f}x")
    print(f"ratio request throughput agentbus/raw: {ours_rps / raw_rps:.2f}x  (target >= 0.9x)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=16)
    ap.add_argument("--speed", type=float, default=1.0, help="server time scale (1 = realistic)")
    ap.add_argument(
        "--no-plots",
        action="store_true",
        help="skip the runs' plots (their directory is deleted anyway; seconds of the smoke test)",
    )
    args = ap.parse_args()
    anyio.run(main, args.tasks, args.speed, not args.no_plots)
