"""The module gateway's cost: per call against calling the same model server directly.

Arms, side by side in one run, interleaved per concurrency level:

* **direct**: in-process agents, each an ``openai.AsyncOpenAI`` client (one
  shared connection pool, as the gateway gives in-process agents), call the
  simulator's OpenAI-compatible server (speed 0: no modelled serving time, so
  every millisecond is software);
* **gateway, upstream in process**: the same agents call the gateway instead
  (their episode token, ``model`` = the module); the gateway routes to the
  module's slot model through the router, which reaches the same simulator
  engine in process: one HTTP hop for the agent in both arms, so the
  difference is what the gateway and the router add;
* **gateway, upstream over HTTP** (``--upstream-http``): the router reaches
  the simulator over its HTTP server, as it reaches a real provider: two
  loopback hops against one.

Each call has a distinct prompt and the cache is off, so every call goes
upstream. Figures per concurrency level (1, 100, 1,000 agents in flight):
p50 and p99 latency per call, requests/s, and the added p50 (gateway - direct)
and the throughput ratio. Then the per-episode cost of a command agent: the
time to start a process that reads the task and prints a result (Python, and
Node when installed), which every ``--agent-cmd`` episode pays on top of its
calls, with ``--agent-isolation none`` and in the default bubblewrap sandbox
(interleaved), so the sandbox's own cost per episode (start, private
directory, cgroup, cleanup) is the difference; the same for a long-lived
worker (``--agent-workers``), which pays the sandbox once. Wall and CPU time
(agentbus and every child) per episode.

Streaming (``--streaming``, on its own): time to first token of a streamed
answer at ``--sim-speed 1`` (realistic serving time), calling the
simulator's server directly against calling it through the gateway, which
routes over HTTP and relays the tokens as they come (target: gateway within
10% of direct); calls interleaved one at a time, distinct prompts, cache off.

    python benchmarks/gateway.py            # about a minute
    python benchmarks/gateway.py --quick    # smoke run (tests)
    python benchmarks/gateway.py --streaming [--quick]
    python benchmarks/gateway.py --commands   # per-episode cost, isolation none vs sandbox
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import openai

from agentbus.core.bus import Bus
from agentbus.core.environment import Task
from agentbus.core.logs import configure
from agentbus.gateway.context import AgentContext
from agentbus.gateway.isolation import Isolation
from agentbus.gateway.runners import CommandAgent
from agentbus.gateway.sandbox import Sandbox
from agentbus.gateway.server import Gateway
from agentbus.gateway.session import Session
from agentbus.gateway.workers import WorkerAgent
from agentbus.llm.config import LLMConfig
from agentbus.llm.router import LLMRouter
from agentbus.sim.config import SimConfig
from agentbus.sim.service import sim_service

Call = Callable[[openai.AsyncOpenAI, str], Awaitable[None]]


def pool() -> httpx2.AsyncClient:
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=2000)
    client: httpx2.AsyncClient = openai.DefaultAsyncHttpxClient(limits=limits, timeout=600.0)
    return client


async def agents(
    clients: list[openai.AsyncOpenAI], model: str, calls: int, tag: str
) -> tuple[list[float], float]:
    """Every client runs ``calls`` sequential calls, all clients at once; latencies, wall."""
    latencies: list[float] = []

    async def one(i: int, client: openai.AsyncOpenAI) -> None:
        for k in range(calls):
            started = time.perf_counter()
            await client.chat.completions.create(
                model=model,
                messages=[{"role": "user", "content": f"{tag} agent {i} call {k}: 2 + 2?"}],
                max_tokens=16,
                temperature=0,
            )
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(one(i, c) for i, c in enumerate(clients)))
    return latencies, time.perf_counter() - started


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def level(
    concurrency: int, calls: int, sim: Any, gateway: Gateway, router: LLMRouter, upstream: str
) -> dict[str, dict[str, float]]:
    shared = pool()
    direct = [
        openai.AsyncOpenAI(base_url=sim.base_url, api_key="sim", max_retries=0, http_client=shared)
        for _ in range(concurrency)
    ]
    contexts: list[AgentContext] = []
    sessions: list[Session] = []
    for i in range(concurrency):
        session = Session(
            episode_id=f"bench-{i}",
            task_id="bench",
            slots={"solver": (upstream, router.client(upstream))},
            off=frozenset(),
            bus=Bus(f"bench-{i}"),
        )
        sessions.append(session)
        contexts.append(gateway.open(session))
    via = [c.openai for c in contexts]
    out: dict[str, dict[str, float]] = {}
    try:
        for arm, clients, model in (
            ("direct", direct, "weak"),
            ("gateway", via, "solver"),
            ("direct", direct, "weak"),
            ("gateway", via, "solver"),
        ):
            lat, wall = await agents(clients, model, calls, f"{arm}{len(out)}")
            figures = {
                "p50_ms": pct(lat, 0.5) * 1000,
                "p99_ms": pct(lat, 0.99) * 1000,
                "rps": len(lat) / wall,
            }
            previous = out.get(arm)
            if previous is None or figures["rps"] > previous["rps"]:  # best of two rounds
                out[arm] = figures
    finally:
        for session in sessions:
            gateway.close(session)
        for c in contexts:
            await c.aclose()
        await shared.aclose()
    return out


#: a worker: one JSON line in, one result line out, episode after episode
WORKER = (
    "import sys, json\n"
    "for line in sys.stdin:\n"
    "    json.loads(line); print(json.dumps({'answer': 1}), flush=True)\n"
)


def _cpu() -> float:
    """CPU seconds of this process (agentbus's side: spawning, reading, cleaning up)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


async def command_cost(repeats: int) -> dict[str, tuple[float, float]]:
    """(median wall, mean agentbus CPU) seconds per episode of an agent that makes no calls.

    Per-episode processes pay the start (bwrap, namespaces, the private tmpfs,
    the cgroup), the agent's own start and the cleanup; a worker pays them
    once and then one line each way per episode. Arms are interleaved, so load
    changes hit them alike, and the median wall time is kept (a loaded machine
    stalls single episodes); the agent's own CPU inside the sandbox is not
    counted (bubblewrap reaps it), agentbus's is.
    """
    ctx = AgentContext("t", "http://127.0.0.1:9/v1", "http://127.0.0.1:9", "token")
    script = "import sys, json; json.load(sys.stdin); print(json.dumps({'answer': 1}))"
    commands = {
        "python": f'{sys.executable} -c "{script}"',
        "python + import openai": f'{sys.executable} -c "import openai; {script}"',
    }
    node = shutil.which("node")
    if node is not None:
        commands["node"] = (
            f"{node} -e \"let s='';process.stdin.on('data',d=>s+=d).on('end',()=>"
            '{JSON.parse(s);console.log(JSON.stringify({answer:1}))})"'
        )
    modes = {"none": Isolation(mode="none")}
    if shutil.which("bwrap") is not None:
        modes["sandbox"] = Isolation(cpu_s=300.0)  # what --agent-cmd runs by default
    worker = Path(tempfile.mkdtemp(prefix="agentbus-bench-")) / "worker.py"
    worker.parent.chmod(0o755)  # a root-run sandbox's agent is nobody: it must read it
    worker.write_text(WORKER)
    arms: dict[str, CommandAgent | WorkerAgent] = {}
    for mode, isolation in modes.items():
        for name, cmd in commands.items():
            arms[f"{name}, process per episode, isolation {mode}"] = CommandAgent(
                cmd, max_processes=1, isolation=isolation
            )
        arms[f"python, worker, isolation {mode}"] = WorkerAgent(
            f"{sys.executable} {worker}", max_processes=1, isolation=isolation
        )
    walls: dict[str, list[float]] = {arm: [] for arm in arms}
    cpus = dict.fromkeys(arms, 0.0)
    try:
        for agent in arms.values():
            await agent.run({"id": "warm"}, ctx)
        for i in range(repeats):  # interleaved, so load changes hit every arm alike
            for arm, agent in arms.items():
                wall, cpu = time.perf_counter(), _cpu()
                await agent.run({"id": str(i)}, ctx)
                walls[arm].append(time.perf_counter() - wall)
                cpus[arm] += _cpu() - cpu
    finally:
        for agent in arms.values():
            await agent.aclose()
        shutil.rmtree(worker.parent, ignore_errors=True)
    return {arm: (statistics.median(walls[arm]), cpus[arm] / repeats) for arm in sorted(arms)}


async def first_token(
    client: openai.AsyncOpenAI, model: str, prompt: str, extra: dict[str, Any] | None = None
) -> tuple[float, float]:
    """(time to the first text delta, time to the end) of one streamed call."""
    started = time.perf_counter()
    first = 0.0
    stream = await client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": prompt}],
        stream=True,
        temperature=0,
        max_tokens=512,
        extra_body=extra,
    )
    async for chunk in stream:
        if not first and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter() - started
    return first, time.perf_counter() - started


async def streaming(args: argparse.Namespace) -> None:
    """Time to first token, direct against through the gateway, at sim speed 1."""
    calls = 6 if args.quick else 40
    print(
        f"streaming: sim speed 1, cache off, router -> sim http, {calls} calls per arm "
        f"interleaved; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    # no prefix cache: both arms send the same prompt, and the second must not be faster for it
    async with sim_service(SimConfig(speed=1.0, prefix_cache_tokens=0, experts=[])) as sim:
        sim.model.add_tasks("external", [Task(id="bench", env="external", instruction="")])
        config = LLMConfig(cache="off", sim_transport="http")
        async with LLMRouter(config, sim=sim) as router:
            gateway = Gateway()
            await gateway.start()
            session = Session(
                episode_id="stream",
                task_id="bench",
                slots={"solver": ("sim:weak", router.client("sim:weak"))},
                off=frozenset(),
                bus=Bus("stream"),
            )
            ctx = gateway.open(session)
            direct = openai.AsyncOpenAI(base_url=sim.base_url, api_key="sim", max_retries=0)
            arms: dict[str, list[tuple[float, float]]] = {"direct": [], "gateway": []}
            try:
                # the same request both ways (the gateway's hint included), so the simulator
                # gives both arms the same answer and the same serving time
                hint = {"agentbus_gateway": {"task": "bench", "module": "solver"}}
                for i in range(calls):
                    prompt = f"streamed call {i}: what is 2 + 2?"
                    arms["direct"].append(await first_token(direct, "weak", prompt, hint))
                    arms["gateway"].append(await first_token(ctx.openai, "solver", prompt))
            finally:
                gateway.close(session)
                await ctx.aclose()
                await direct.close()
                await gateway.stop()
    print(f"{'arm':>8} {'first token p50':>16} {'p90':>8} {'whole answer p50':>17}")
    for arm, rows in arms.items():
        ttft = [r[0] for r in rows]
        print(
            f"{arm:>8} {pct(ttft, 0.5) * 1000:>13.0f} ms {pct(ttft, 0.9) * 1000:>5.0f} ms "
            f"{pct([r[1] for r in rows], 0.5) * 1000:>14.0f} ms"
        )
    ratio = pct([r[0] for r in arms["gateway"]], 0.5) / pct([r[0] for r in arms["direct"]], 0.5)
    print(f"time to first token, gateway / direct at p50: {ratio:.3f}x (target <= 1.10x)")


def sandbox_cpu(repeats: int) -> str | None:
    """CPU per episode of the sandbox itself: ``python -c pass`` beside agentbus against the
    same in the sandbox, whose tree CPU (sh, bubblewrap, python) its cgroup counts; plus
    agentbus's own CPU for each (building the command line, the group, the cleanup)."""
    isolation = Isolation(cpu_s=300.0)
    argv = [sys.executable, "-c", "pass"]
    sandbox = Sandbox(isolation, argv, Path.cwd(), {"PATH": os.environ.get("PATH", "")})
    none_cpu = tree_cpu = none_own = sandbox_own = 0.0
    counted = True
    try:
        for _ in range(repeats):  # interleaved
            kids, own = _children_cpu(), _cpu()
            subprocess.run(argv, check=True)
            none_cpu += _children_cpu() - kids
            none_own += _cpu() - own
            own = _cpu()
            launch = sandbox.launch({"PATH": "/usr/bin:/bin"})
            subprocess.run(
                launch.argv, check=True, pass_fds=launch.fds, env=launch.env, cwd=launch.cwd,
                preexec_fn=launch.preexec,
            )  # fmt: skip
            used = launch.group.usage_ns() if launch.group is not None else None
            counted = counted and used is not None
            tree_cpu += (used or 0) / 1e9
            launch.close()
            sandbox_own += _cpu() - own
    finally:
        sandbox.close()
    if not counted:
        return None
    n = repeats
    return (
        f"CPU per episode, python -c pass: beside agentbus {none_cpu / n * 1000:.1f} ms "
        f"(agentbus {none_own / n * 1000:.1f} ms); in the sandbox {tree_cpu / n * 1000:.1f} ms "
        f"(agentbus {sandbox_own / n * 1000:.1f} ms); the sandbox adds "
        f"{(tree_cpu + sandbox_own - none_cpu - none_own) / n * 1000:.1f} ms CPU"
    )


def _children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def print_costs(costs: dict[str, tuple[float, float]]) -> None:
    for name, (wall, cpu) in costs.items():
        ms = f"{wall * 1000:.0f} ms wall (median), agentbus {cpu * 1000:.1f} ms CPU"
        print(f"command agent per episode ({name}): {ms}")
    for name, (wall, cpu) in costs.items():
        base = costs.get(name.replace("isolation sandbox", "isolation none"))
        if "sandbox" in name and base is not None:
            print(
                f"sandbox adds per episode ({name.rsplit(', isolation', 1)[0]}): "
                f"{(wall - base[0]) * 1000:+.0f} ms wall, agentbus "
                f"{(cpu - base[1]) * 1000:+.1f} ms CPU"
            )


async def main(args: argparse.Namespace) -> None:
    if args.streaming:
        await streaming(args)
        return
    if args.commands:
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print_costs(await command_cost(3 if args.quick else 20))
        if shutil.which("bwrap") is not None:
            print(sandbox_cpu(3 if args.quick else 30) or "no cgroup here: sandbox CPU not counted")
        return
    levels = [(1, 20, 1), (10, 5, 1), (50, 2, 1)] if args.quick else [
        (1, 200, 1), (100, 10, 1), (1000, 2, 1)]  # fmt: skip
    transport = "http" if args.upstream_http else "inprocess"
    print(
        f"gateway benchmark: sim speed 0, cache off, router -> sim {transport}; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    async with sim_service(SimConfig(speed=0.0, experts=[])) as sim:
        sim.model.add_tasks("external", [Task(id="bench", env="external", instruction="")])
        config = LLMConfig(cache="off", sim_transport=transport)
        async with LLMRouter(config, sim=sim) as router:
            gateway = Gateway()
            await gateway.start()
            try:
                print(f"{'agents':>7} {'arm':>8} {'p50 ms':>8} {'p99 ms':>8} {'req/s':>8}")
                rows = []
                for concurrency, calls, _ in levels:
                    res = await level(concurrency, calls, sim, gateway, router, "sim:weak")
                    for arm in ("direct", "gateway"):
                        f = res[arm]
                        print(
                            f"{concurrency:>7} {arm:>8} {f['p50_ms']:>8.2f} "
                            f"{f['p99_ms']:>8.2f} {f['rps']:>8.0f}"
                        )
                    rows.append((concurrency, res))
            finally:
                await gateway.stop()
    print_costs(await command_cost(3 if args.quick else 20))
    for concurrency, res in rows:
        added = res["gateway"]["p50_ms"] - res["direct"]["p50_ms"]
        ratio = res["gateway"]["rps"] / res["direct"]["rps"]
        print(
            f"{concurrency} agents: gateway adds {added:.2f} ms at p50 "
            f"(p99 {res['gateway']['p99_ms'] - res['direct']['p99_ms']:+.2f} ms); "
            f"requests/s ratio {ratio:.2f}x"
        )


if __name__ == "__main__":
    configure("error")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    parser.add_argument(
        "--upstream-http", action="store_true", help="router reaches the sim over HTTP"
    )
    parser.add_argument(
        "--streaming", action="store_true", help="only the time-to-first-token comparison"
    )
    parser.add_argument(
        "--commands", action="store_true", help="only the command agents' cost per episode"
    )
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    asyncio.run(main(parser.parse_args()))
