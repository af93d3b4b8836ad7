"""Scale benchmark: 10,000 concurrent PRAF math episodes on one event loop.

The real CapaBench agent (``praf``: planning, reasoning, action, reflection
actors) solves generated math problems through the real math environment
(sympy calculator off the loop, BM25 search), against the simulator reached
in process (no sockets: the point is the framework and the loop, not the
HTTP stack). The plan is the usual coalition grid (16 coalitions of
``sim:strong`` over ``sim:weak``) over ``episodes / 16`` tasks, so shared
calls coalesce as in a real run. Every episode is admitted at once
(``Runtime(max_concurrency=episodes)``) and the simulator batches up to
``episodes`` sequences, so they really are in flight together. Its batch
slowdown is off (``batch_slowdown=0``): at 10,000 sequences the default would
make one token take seconds, and the subject here is the client, not the
server's batching. ``--speed`` divides the simulated latencies (20: a
100-token answer in about 0.1 s).

The peak RSS per episode is the growth of the process's RSS from just before
the episodes start to its highest sample during the run (sampled every 10
beats), divided by the number of episodes. Alongside each lag figure the
script reports the part of it the loop thread spent on the CPU, which tells
the loop's own work apart from waiting for a core on a busy machine.

Figures: episodes/s, peak RSS growth per concurrent episode, and the lag of a
10 ms heartbeat task (how late it wakes; p50/p99/max). Target: the loop
thread's own part of it (on the CPU) p99 < 50 ms.

No episode timeout by default (``--timeout S`` sets one): every episode is
admitted at once, so an episode's wall time is most of the run's, and on a
machine whose cores are busy with other work the run's rate, not the
episode, decides it. The 10,000-episode run at load 20-30 took 1,508 s (7
episodes/s, about 4,700 in flight): 3,792 healthy episodes passed the old
600 s wall-clock timeout while they waited for a core (an episode's clock
already leaves out waits for a model slot, agentbus/llm/queueing.py, but
not waits for the CPU). The report gives the episodes' wall time (p50, max)
beside the run's and one error message per error kind.

``--sim thread`` (the default) runs the simulator on an event loop of its own
in a thread (``SimConfig.thread``): its answers reach the run's loop in
batches bounded by the loop's own CPU per iteration, and the on-CPU lag is
the framework's, not the stand-in server's. ``--sim loop`` puts it back on
the run's loop (as before issue 53); ``--sim both`` measures the two side by
side, each in a fresh subprocess, and prints their ratios last.

``--loop auto`` (the default) uses uvloop when it is installed, as
``python -m agentbus.run`` does; ``--loop both`` measures the asyncio and the
uvloop event loop side by side, each in a fresh subprocess, and prints the
uvloop/asyncio ratios last (twice the time: use fewer episodes).

Run: ``python benchmarks/scale.py [--episodes 10000] [--speed 20] [--loop auto]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from agentbus.app.evaluation import Agent, EvaluationPlan, SpecFactory
from agentbus.core import registry
from agentbus.core.environment import EnvSetup, Task, TaskSource
from agentbus.core.episode import EpisodeSpec
from agentbus.core.logs import configure
from agentbus.core.outcome import Outcome
from agentbus.core.record import EpisodeRecord
from agentbus.executors.runtime import Runtime
from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.router import LLMRouter
from agentbus.sim.config import SimConfig
from agentbus.sim.service import sim_service

HEARTBEAT_S = 0.010
LAG_TARGET_MS = 50.0
RESULT_TAG = "SCALE-RESULT "
Cell = tuple[str, tuple[str, ...], Task, int]


def rss_kb() -> int:
    """Current resident set size of this process, in KB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@dataclass
class Heartbeat:
    """A task that asks to wake every 10 ms and records how late it woke.

    A late wake-up means something held the event loop: a long synchronous
    handler, sympy on the loop, a big serialisation. It also samples RSS, so
    the peak during the run is seen without a second task.
    """

    lags_ms: list[float] = field(default_factory=list)
    busy_ms: list[float] = field(default_factory=list)
    peak_rss_kb: int = 0

    async def run(self) -> None:
        beat = 0
        while True:
            t0 = time.perf_counter()
            c0 = time.thread_time()
            await anyio.sleep(HEARTBEAT_S)
            lag = time.perf_counter() - t0 - HEARTBEAT_S
            self.lags_ms.append(lag * 1000.0)
            # the part of the lag the loop thread spent on the CPU (its own work),
            # as opposed to waiting for a core the machine gave to someone else
            self.busy_ms.append(min(lag, max(0.0, time.thread_time() - c0)) * 1000.0)
            beat += 1
            if beat % 10 == 0:
                self.peak_rss_kb = max(self.peak_rss_kb, rss_kb())

    def percentile(self, q: float, *, busy: bool = False) -> float:
        data = sorted(self.busy_ms if busy else self.lags_ms)
        if not data:
            return 0.0
        return data[min(len(data) - 1, int(q * len(data)))]


def build_plan(episodes: int) -> tuple[EvaluationPlan, EnvSetup, list[Cell]]:
    """The coalition grid over enough generated math tasks for ``episodes`` episodes."""
    env_cls = registry.get("environments", "math")
    agent = Agent.resolve("praf", {})
    n_coalitions = 2 ** len(agent.slots)
    tasks_needed = max(1, -(-episodes // n_coalitions))
    setup: EnvSetup = env_cls.setup(TaskSource(count=tasks_needed, seed=7))
    plan = EvaluationPlan(agent, agent.slots, "sim:weak", ("sim:strong",), setup.tasks)
    return plan, setup, list(plan.cells())[:episodes]


class Startable(Protocol):
    """A profiler: started just before the episodes run, stopped right after."""

    def start(self) -> Any: ...
    def stop(self) -> Any: ...


async def measure(
    episodes: int,
    speed: float,
    profiler: Startable | None = None,
    sim_thread: bool = True,
    timeout_s: float | None = None,
) -> dict[str, Any]:
    """Run the scale benchmark once on the current loop; return its figures."""
    plan, setup, cells = build_plan(episodes)
    sim_config = SimConfig(
        transport="inprocess",
        speed=speed,
        max_num_seqs=episodes,
        batch_slowdown=0.0,
        experts=["math"],
        thread=sim_thread,
    )
    llm_config = LLMConfig(
        limits=EndpointLimits(max_concurrency=episodes, read_timeout=600.0),
        sim_transport="inprocess",
    )
    outcomes: list[Outcome] = []
    peak_in_flight = 0
    runtime = Runtime(max_concurrency=episodes)

    async def on_outcome(spec: EpisodeSpec, record: EpisodeRecord) -> None:
        nonlocal peak_in_flight
        outcomes.append(record.outcome)
        peak_in_flight = max(peak_in_flight, runtime.in_flight)

    async with sim_service(sim_config) as sim:
        sim.model.add_tasks("math", setup.tasks)
        async with LLMRouter(llm_config, sim=sim) as router:
            factory = SpecFactory(
                plan, setup.factory, router.client, timeout_s=timeout_s, trace=False
            )
            specs = [factory.build(*cell) for cell in cells]
            del cells
            gc.collect()
            before_kb = rss_kb()
            beat = Heartbeat(peak_rss_kb=before_kb)
            cpu0 = time.process_time()
            t0 = time.perf_counter()
            async with anyio.create_task_group() as tg:
                tg.start_soon(beat.run)
                if profiler is not None:
                    profiler.start()
                try:
                    await runtime.run(specs, on_outcome)
                finally:
                    if profiler is not None:
                        profiler.stop()
                tg.cancel_scope.cancel()
            wall = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            llm = router.stats()
    errors = sum(1 for o in outcomes if o.error_kind not in (None, "step_limit"))
    kinds: dict[str, int] = {}
    examples: dict[str, str] = {}
    for o in outcomes:
        if o.error_kind not in (None, "step_limit"):
            kinds[str(o.error_kind)] = kinds.get(str(o.error_kind), 0) + 1
            examples.setdefault(str(o.error_kind), (o.error or "")[:300])
    latencies = sorted(o.latency_s for o in outcomes) or [0.0]
    return {
        "loop": "uvloop" if _running_uvloop() else "asyncio",
        "episodes": len(outcomes),
        "errors": errors,
        "error_kinds": kinds,
        "error_examples": examples,
        "timeout_s": timeout_s,
        "episode_wall_p50_s": latencies[len(latencies) // 2],
        "episode_wall_max_s": latencies[-1],
        "success": sum(o.success for o in outcomes) / max(1, len(outcomes)),
        "steps_mean": statistics.fmean(o.steps for o in outcomes) if outcomes else 0.0,
        "peak_in_flight": peak_in_flight,
        "wall_s": wall,
        "cpu_s": cpu,
        "episodes_per_s": len(outcomes) / wall,
        "cpu_ms_per_episode": cpu * 1000.0 / max(1, len(outcomes)),
        "rss_before_mb": before_kb / 1024,
        "rss_peak_mb": beat.peak_rss_kb / 1024,
        "kb_per_episode": (beat.peak_rss_kb - before_kb) / max(1, episodes),
        "lag_p50_ms": beat.percentile(0.50),
        "lag_p99_ms": beat.percentile(0.99),
        "lag_max_ms": max(beat.lags_ms, default=0.0),
        "busy_lag_p99_ms": beat.percentile(0.99, busy=True),
        "beats": len(beat.lags_ms),
        "llm_sent": llm.get("total", {}).get("sent"),
        "llm_requested": llm.get("total", {}).get("requested"),
    }


def _running_uvloop() -> bool:
    import asyncio

    return type(asyncio.get_running_loop()).__module__.startswith("uvloop")


def run_in_process(args: argparse.Namespace, loop: str) -> dict[str, Any]:
    """Run one measurement on ``loop`` in this process."""
    options = {"use_uvloop": loop == "uvloop"}
    result: dict[str, Any] = anyio.run(
        measure,
        args.episodes,
        args.speed,
        None,
        args.sim == "thread",
        args.timeout,
        backend_options=options,
    )
    return result


def run_in_subprocess(
    args: argparse.Namespace, loop: str, sim: str | None = None
) -> dict[str, Any] | None:
    """One measurement on ``loop`` in a fresh interpreter (clean RSS, clean caches)."""
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--episodes",
        str(args.episodes),
        "--speed",
        str(args.speed),
        "--loop",
        loop,
        "--sim",
        sim or args.sim,
        "--json",
    ]
    if args.timeout is not None:
        cmd += ["--timeout", str(args.timeout)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            data: dict[str, Any] = json.loads(line[len(RESULT_TAG) :])
            return data
    print(f"  {loop}: run failed (exit {proc.returncode})\n{proc.stderr[-2000:]}")
    return None


def uvloop_installed() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def report(r: dict[str, Any]) -> None:
    met = "met" if r["busy_lag_p99_ms"] < LAG_TARGET_MS else "NOT met"
    print(
        f"  [{r['loop']}] {r['episodes']:,} episodes ({r['errors']} errors "
        f"{r['error_kinds'] or ''}), peak {r['peak_in_flight']:,} in flight, "
        f"success {r['success']:.2f}, {r['steps_mean']:.1f} steps/episode, "
        f"LLM calls sent/requested {r['llm_sent']}/{r['llm_requested']}"
    )
    print(
        f"  [{r['loop']}] {r['wall_s']:.1f} s wall, {r['episodes_per_s']:,.0f} episodes/s, "
        f"{r['cpu_ms_per_episode']:.2f} ms CPU/episode; an episode's wall time p50 "
        f"{r['episode_wall_p50_s']:.1f} s, max {r['episode_wall_max_s']:.1f} s (timeout "
        f"{'none' if r['timeout_s'] is None else format(r['timeout_s'], 'g') + ' s'})"
    )
    for kind, text in r["error_examples"].items():
        print(f"  [{r['loop']}] first {kind} error: {text}")
    print(
        f"  [{r['loop']}] RSS {r['rss_before_mb']:.0f} -> {r['rss_peak_mb']:.0f} MB peak: "
        f"{r['kb_per_episode']:.1f} KB per concurrent episode"
    )
    print(
        f"  [{r['loop']}] heartbeat lag over {r['beats']} beats: p50 {r['lag_p50_ms']:.1f} ms, "
        f"p99 {r['lag_p99_ms']:.1f} ms, max {r['lag_max_ms']:.1f} ms"
    )
    print(
        f"  [{r['loop']}] of which the loop thread was on the CPU: p99 "
        f"{r['busy_lag_p99_ms']:.1f} ms (target < {LAG_TARGET_MS:.0f} ms: {met}; the rest: "
        "waiting for a core on a shared machine)"
    )


def compare_sims(args: argparse.Namespace) -> int:
    """The simulator on its own thread and on the run's loop, fresh processes, ratios last."""
    loop = "asyncio" if args.loop == "both" else args.loop
    found: dict[str, dict[str, Any]] = {}
    for sim in ("loop", "thread"):
        r = run_in_subprocess(args, loop, sim)
        if r is None:
            return 1
        print(f"  --sim {sim}:")
        report(r)
        found[sim] = r
    t, lp = found["thread"], found["loop"]
    print(
        f"ratio thread/loop: on-CPU lag p99 {t['busy_lag_p99_ms'] / lp['busy_lag_p99_ms']:.2f}x, "
        f"lag p99 {t['lag_p99_ms'] / lp['lag_p99_ms']:.2f}x, "
        f"CPU per episode {t['cpu_ms_per_episode'] / lp['cpu_ms_per_episode']:.2f}x, "
        f"episodes/s {t['episodes_per_s'] / lp['episodes_per_s']:.2f}x"
    )
    print(f"ratio on-CPU lag p99 / target (thread): {t['busy_lag_p99_ms'] / LAG_TARGET_MS:.2f}x")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument(
        "--speed", type=float, default=20.0, help="simulator time scale (1 = realistic)"
    )
    ap.add_argument("--loop", choices=["auto", "asyncio", "uvloop", "both"], default="auto")
    ap.add_argument(
        "--sim",
        choices=["thread", "loop", "both"],
        default="thread",
        help="the simulator on a loop of its own in a thread (SimConfig.thread), or on the run's",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="wall-clock timeout per episode in seconds (default: none, see the docstring)",
    )
    ap.add_argument("--json", action="store_true", help="print one machine-readable line")
    args = ap.parse_args()
    configure("warning")
    if args.loop == "auto":
        args.loop = "uvloop" if uvloop_installed() else "asyncio"
    if args.loop == "uvloop" and not uvloop_installed():
        print("uvloop is not installed (pip install uvloop); measuring asyncio only")
        args.loop = "asyncio"
    print(
        f"scale: {args.episodes:,} concurrent PRAF episodes on the math environment, "
        f"in-process simulator at speed {args.speed:g}, one event loop"
    )
    if args.sim == "both":
        return compare_sims(args)
    if args.loop != "both":
        result = run_in_process(args, args.loop)
        if args.json:
            print(RESULT_TAG + json.dumps(result))
        report(result)
        print(f"ratio on-CPU lag p99 / target: {result['busy_lag_p99_ms'] / LAG_TARGET_MS:.2f}x")
        return 0
    loops = ["asyncio", "uvloop"] if uvloop_installed() else ["asyncio"]
    results = {}
    for loop in loops:
        r = run_in_subprocess(args, loop)
        if r is None:
            return 1
        results[loop] = r
        report(r)
    base = results["asyncio"]
    print(f"ratio p99 lag / target (asyncio): {base['lag_p99_ms'] / LAG_TARGET_MS:.2f}x")
    if "uvloop" in results:
        uv = results["uvloop"]
        print(f"ratio p99 lag / target (uvloop): {uv['lag_p99_ms'] / LAG_TARGET_MS:.2f}x")
        print(
            f"ratio uvloop/asyncio episodes/s: {uv['episodes_per_s'] / base['episodes_per_s']:.2f}x"
        )
    else:
        print("uvloop not installed (pip install uvloop): asyncio only")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
