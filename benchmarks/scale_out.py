"""Scale-out in virtual time: agentbus vs CapaBench's design as simulated vLLM servers are added.

The question: with N vLLM servers of 256 sequences each (an 8B model on one
H100 per server), how many times faster than CapaBench's design (16
processes, each running one episode at a time, no shared calls) does
agentbus finish the same episodes, and how many client cores does it need
for that?

How it is measured (one run of this script prints everything):

1. **The workload, for real.** A real ``evaluate`` (local executor, the PRAF
   agent on the math generator, 16 coalitions per task) against the
   simulator in its own process, serving the calibrated profile below at
   speed 0: per episode the LLM calls requested, the share sent upstream
   after shared calls (cache hits, coalesced), tokens per call and the prefix
   cache's share of prompt tokens, and the client's real CPU time per
   episode (``time.process_time`` of this process, the server excluded).
2. **The curve, in virtual time.** A discrete-event simulation of N servers
   with the simulator's own serving rules (``agentbus.sim.serving``: a
   request's time per token fixed at admission by the batch size then,
   ``max_num_seqs`` seats, FIFO queue) and the router's least-outstanding
   choice, fed with episodes drawn from the measured workload. agentbus
   keeps 2 x 256 x N episodes in flight with shared calls; CapaBench's design
   keeps 16, every call sent. Virtual time does not depend on this
   machine's 2 cores; the client CPU measured in step 1 says how many cores
   each point needs (episodes per virtual second x CPU per episode).
3. **Real points.** The same figures, in wall-clock time, from the local
   executor, from Ray with 2 workers and from CapaBench's design (16
   episodes at a time, cache off) against one real simulated server at the
   calibrated profile, sped up ``--speed`` times; divided by the speed they
   are comparable to the N = 1 point of the curve (as far as 2 shared cores
   can drive them: the client CPU share is printed).

Serving profile (benchmarks/README.md cites the sources): 8B model, one H100,
150 output tokens/s for one sequence (6.7 ms per token) and about 12,500
tokens/s over 256 (20.5 ms per token each), i.e. +0.81% per extra sequence,
not the simulator's default +3%.

Run: ``python benchmarks/scale_out.py [--tasks 8] [--real-tasks 24] [--speed 10] [--no-ray]``.
"""

from __future__ import annotations

import argparse
import heapq
import io
import json
import random
import statistics
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import orjson

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.append(str(_HERE))

from llm_bench import ServerSpec, SimServer, quiet_logs  # noqa: E402
from rich.console import Console  # noqa: E402

from agentbus.app.config import build_config  # noqa: E402
from agentbus.app.evaluate import evaluate  # noqa: E402
from agentbus.core.events import EPISODE_ENDED  # noqa: E402

#: decode time per token of one sequence alone (150 tokens/s on one H100, 8B)
DECODE_S_PER_TOKEN = 1 / 150
#: per extra sequence: 256 sequences decode at 12,500 tokens/s in total
BATCH_SLOWDOWN = (256 / 12_500 / DECODE_S_PER_TOKEN - 1) / 255
MAX_NUM_SEQS = 256
PREFILL_TOKENS_PER_S = 20_000.0
BASE_LATENCY_S = 0.02
SERVERS = (1, 2, 4, 8, 16, 32, 64)
#: CapaBench's design: 16 processes, one episode each at a time
SEQUENTIAL = 16

PROFILE = {
    "decode_s_per_token": DECODE_S_PER_TOKEN,
    "batch_slowdown": BATCH_SLOWDOWN,
    "prefill_tokens_per_s": PREFILL_TOKENS_PER_S,
    "base_latency_s": BASE_LATENCY_S,
}


def tpot(batch: int) -> float:
    return DECODE_S_PER_TOKEN * (1 + BATCH_SLOWDOWN * (batch - 1))


@dataclass
class Workload:
    """What one episode asks of the servers, measured from a real run."""

    calls: list[int]  # requested LLM calls of each measured episode
    sent_share: float  # sent / requested (shared calls made once)
    hit_share: float  # of the calls not sent: answered from the cache at once
    prompt_tokens: float  # per sent call
    completion_tokens: float  # per sent call
    cached_prompt_share: float  # of prompt tokens, served from the prefix cache
    cpu_s_per_episode: float  # client CPU, measured for real

    def call_s(self, batch: int) -> float:
        prefill = self.prompt_tokens * (1 - self.cached_prompt_share) / PREFILL_TOKENS_PER_S
        return BASE_LATENCY_S + prefill + self.completion_tokens * tpot(batch)


def config(run_dir: Path, url: str, tasks: int, **kw: Any) -> Any:
    data: dict[str, Any] = {
        "tasks": tasks,
        "default": f"vllm:{url}#weak",
        "test": [f"vllm:{url}#strong"],
        "progress": "off",
        "plots": False,
        "run_dir": str(run_dir),
    }
    data.update(kw)
    return build_config(data)


async def run_real(run_dir: Path, url: str, tasks: int, **kw: Any) -> dict[str, Any]:
    """One real evaluation: wall seconds, client CPU seconds, episodes, LLM counters."""
    cfg = config(run_dir, url, tasks, **kw)
    cpu, wall = time.process_time(), time.perf_counter()
    report = await evaluate(cfg, Console(file=io.StringIO()))
    return {
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "episodes": report.episodes_run,
        "llm": report.results["llm"]["total"],
        "results": report.results,
    }


def steady_rate(run_dir: Path) -> float:
    """Episodes per wall second over the middle half of the run's endings (as the curve)."""
    ends = sorted(
        float(e["ts"])
        for e in map(orjson.loads, (run_dir / "events.jsonl").read_bytes().splitlines())
        if e.get("type") == EPISODE_ENDED
    )
    lo, hi = len(ends) // 4, (3 * len(ends)) // 4
    return (hi - lo) / (ends[hi] - ends[lo]) if hi - lo >= 2 and ends[hi] > ends[lo] else 0.0


def per_episode_calls(run_dir: Path) -> list[int]:
    calls = []
    for line in (run_dir / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event.get("type") == EPISODE_ENDED:
            calls.append(int(event["outcome"].get("llm_calls", 0)))
    return calls


def server_counters(url: str) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(url.removesuffix("/v1") + "/metrics.json", timeout=10) as r:
        data: dict[str, Any] = json.loads(r.read())
    return data


async def measure_workload(tasks: int, tmp: Path) -> Workload:
    """The workload of ``tasks`` tasks; CPU per episode from the difference of two runs.

    A warm-up run pays the one-off costs (lazy imports, the client's first
    connections); then a run of ``tasks`` tasks and one of ``3 x tasks`` pay the
    same per-run set-up, so their difference is the CPU of the extra episodes
    alone. Without the warm-up the one-off costs fell on the first measured run
    and the difference came out negative at one task.
    """
    spec = ServerSpec(3 * tasks, speed=0, max_num_seqs=MAX_NUM_SEQS, extra=PROFILE)
    with SimServer(spec) as warm:  # a server of its own: the measured one's prefix cache is cold
        await run_real(tmp / "warmup", warm.url, tasks)
    with SimServer(spec) as sim:
        real = await run_real(tmp / "workload", sim.url, tasks)
        counters = server_counters(sim.url)
        more = await run_real(tmp / "workload3", sim.url, 3 * tasks)
    cpu = (more["cpu_s"] - real["cpu_s"]) / max(1, more["episodes"] - real["episodes"])
    llm = real["llm"]
    requested, sent = llm["requested"], llm["sent"]
    not_sent = max(1, requested - sent)
    prompt = counters["prompt_tokens"]
    return Workload(
        calls=per_episode_calls(tmp / "workload"),
        sent_share=sent / requested,
        hit_share=llm["cache_hits"] / not_sent if requested > sent else 1.0,
        prompt_tokens=llm["prompt_tokens"] / max(1, llm["succeeded"]),
        completion_tokens=llm["completion_tokens"] / max(1, llm["succeeded"]),
        cached_prompt_share=counters["prefix_cache_hit_tokens"] / max(1, prompt),
        cpu_s_per_episode=cpu,
    )


def simulate(
    work: Workload, servers: int, in_flight: int, episodes: int, shared: bool, seed: int = 0
) -> float:
    """Episodes per virtual second at steady state (the middle half of the run)."""
    rng = random.Random(seed)
    running = [0] * servers
    queues: list[deque[int]] = [deque() for _ in range(servers)]  # waiting call ids per server
    now = 0.0
    events: list[tuple[float, int, int, int]] = []  # (time, seq, kind, episode)
    seq = 0
    left: dict[int, int] = {}
    where: dict[int, int] = {}
    done: list[float] = []
    started = 0
    loads: list[tuple[int, int]] = [(0, i) for i in range(servers)]  # (load, server), lazy

    def load(server: int) -> int:
        return running[server] + len(queues[server])

    def changed(server: int) -> None:
        heapq.heappush(loads, (load(server), server))

    def least_loaded() -> int:
        while True:
            value, server = loads[0]
            if value == load(server):
                return server
            heapq.heappop(loads)  # stale entry

    def push(t: float, kind: int, episode: int) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (t, seq, kind, episode))

    def admit(server: int, episode: int) -> None:
        running[server] += 1
        where[episode] = server
        push(now + work.call_s(running[server]), 1, episode)
        changed(server)

    def next_call(episode: int) -> None:
        if left[episode] == 0:
            done.append(now)
            del left[episode]
            start_episode()
            return
        left[episode] -= 1
        if shared and rng.random() >= work.sent_share:
            if rng.random() < work.hit_share:
                push(now, 2, episode)  # a cache hit: answered at once
            else:  # coalesced: waits for the identical call in flight, loads no seat
                push(now + work.call_s(max(1, running[rng.randrange(servers)])), 2, episode)
            return
        server = least_loaded()
        if running[server] < MAX_NUM_SEQS:
            admit(server, episode)
        else:
            queues[server].append(episode)
            changed(server)

    def start_episode() -> None:
        nonlocal started
        if started >= episodes:
            return
        started += 1
        ident = started
        left[ident] = max(1, rng.choice(work.calls))
        next_call(ident)

    for _ in range(in_flight):
        start_episode()
    while events:
        now, _, kind, episode = heapq.heappop(events)
        if kind == 1:  # a sent call finished: free its seat, admit the next waiting one
            server = where.pop(episode)
            running[server] -= 1
            if queues[server]:
                admit(server, queues[server].popleft())
            changed(server)
        next_call(episode)
    lo, hi = len(done) // 4, (3 * len(done)) // 4
    if hi - lo < 2:
        return len(done) / done[-1]
    return (hi - lo) / (done[hi] - done[lo])


def curve(work: Workload, servers: tuple[int, ...], rounds: int) -> list[dict[str, float]]:
    rows = []
    for n in servers:
        in_flight = 2 * MAX_NUM_SEQS * n
        ours = simulate(work, n, in_flight, episodes=rounds * in_flight, shared=True)
        theirs = simulate(work, n, SEQUENTIAL, episodes=rounds * 64 * SEQUENTIAL, shared=False)
        rows.append(
            {
                "servers": n,
                "agentbus_eps": ours,
                "sequential_eps": theirs,
                "speedup": ours / theirs,
                "client_cores": ours * work.cpu_s_per_episode,
            }
        )
    return rows


async def real_points(args: argparse.Namespace, tmp: Path) -> list[dict[str, Any]]:
    """Local executor, Ray with 2 workers and the sequential design on one real server.

    The agentbus arms keep as many episodes in flight as the curve (2 x 256:
    32 task blocks of 16); the sequential design runs a quarter of the tasks
    (its rate is steady from the start and it is slow). Rates are taken over
    the middle half of the episodes' endings, as in the curve.
    """
    spec = ServerSpec(args.real_tasks, speed=args.speed, max_num_seqs=MAX_NUM_SEQS, extra=PROFILE)
    fill = {"tasks_in_flight": 2 * MAX_NUM_SEQS // 16}
    arms: list[tuple[str, int, dict[str, Any]]] = [
        ("agentbus local", args.real_tasks, fill),
        ("CapaBench design (16 at a time, no shared calls)", max(2, args.real_tasks // 4),
         {"concurrency": SEQUENTIAL, "llm": {"cache": "off"}}),
    ]  # fmt: skip
    if not args.no_ray:
        ray_arm = {**fill, "executor": "ray", "workers": 2}
        arms.insert(1, ("agentbus Ray, 2 workers", args.real_tasks, ray_arm))
    points = []
    for i, (name, tasks, kw) in enumerate(arms):
        with SimServer(spec) as sim:
            r = await run_real(tmp / f"real{i}", sim.url, tasks, **kw)
        eps = steady_rate(tmp / f"real{i}")
        points.append(
            {
                "arm": name,
                "episodes": r["episodes"],
                "wall_s": r["wall_s"],
                "virtual_eps": eps / args.speed,
                "driver_cpu_share": r["cpu_s"] / r["wall_s"],
                "table": {
                    k: round(c["mean"], 4)
                    for k, c in r["results"]["models"][f"vllm:{sim.url}#strong"][
                        "coalitions"
                    ].items()
                },
            }
        )
    return points


async def main(args: argparse.Namespace) -> None:
    quiet_logs()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        work = await measure_workload(args.tasks, tmp)
        print(
            f"workload (measured, {len(work.calls)} episodes of PRAF on math): "
            f"{statistics.mean(work.calls):.1f} LLM calls per episode, "
            f"{work.sent_share:.2f} of them sent (shared calls), "
            f"{work.prompt_tokens:.0f} prompt + {work.completion_tokens:.0f} completion tokens "
            f"per sent call, {work.cached_prompt_share:.2f} of prompt tokens from the prefix "
            f"cache; client CPU {work.cpu_s_per_episode * 1000:.1f} ms per episode"
        )
        print(
            f"serving profile: {MAX_NUM_SEQS} seqs per server, {1 / tpot(1):.0f} tokens/s for "
            f"one sequence, {MAX_NUM_SEQS / tpot(MAX_NUM_SEQS):,.0f} tokens/s over "
            f"{MAX_NUM_SEQS} (+{BATCH_SLOWDOWN * 100:.2f}% per extra sequence)"
        )
        servers = tuple(n for n in SERVERS if n <= args.max_servers)
        rows = curve(work, servers, args.rounds)
        print("\nvirtual time (discrete-event, the simulator's serving rules):")
        print(" servers | agentbus eps/s | CapaBench eps/s | speed-up | client cores needed")
        for r in rows:
            print(
                f" {r['servers']:7d} | {r['agentbus_eps']:14.1f} | {r['sequential_eps']:15.2f} |"
                f" {r['speedup']:7.1f}x | {r['client_cores']:6.1f}"
            )
        hit = next((r for r in rows if r["speedup"] >= 100), None)
        points = [] if args.no_real else await real_points(args, tmp)
        if points:
            print(
                f"\nreal, one simulated server (calibrated, speed {args.speed:g}), "
                f"{args.real_tasks} tasks ({args.real_tasks // 4} for the CapaBench design); "
                "episodes per virtual second = steady wall rate / speed:"
            )
            for p in points:
                print(
                    f" {p['arm']}: {p['episodes']} episodes in {p['wall_s']:.1f} s wall, steady "
                    f"{p['virtual_eps']:.2f} eps per virtual s, driver CPU "
                    f"{p['driver_cpu_share']:.2f} cores"
                )
            tables = [p["table"] for p in points if not p["arm"].startswith("CapaBench")]
            same = all(t == tables[0] for t in tables)
            print(f" same per-coalition table from every agentbus arm: {same}")
            seq = next(p for p in points if p["arm"].startswith("CapaBench"))
            local = points[0]
            print(
                f" real speed-up at 1 server (local / CapaBench design): "
                f"{local['virtual_eps'] / seq['virtual_eps']:.1f}x "
                f"(curve at 1 server: {rows[0]['speedup']:.1f}x)"
            )
        summary: dict[str, Any] = {
            "curve": rows,
            "reaches_100x": None
            if hit is None
            else {"servers": hit["servers"], "client_cores": hit["client_cores"]},
            "real": [{k: v for k, v in p.items() if k != "table"} for p in points],
            "cpu_ms_per_episode": work.cpu_s_per_episode * 1000,
        }
        if hit is None:
            print("\n>= 100x: not reached on this curve")
        else:
            print(
                f"\n>= 100x the CapaBench design from {hit['servers']} servers "
                f"({hit['speedup']:.0f}x), needing {hit['client_cores']:.1f} client cores "
                f"(e.g. --executor ray --workers {max(1, round(hit['client_cores'] + 0.5))})"
            )
        print("RESULT " + json.dumps(summary))


def cli() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=int, default=8, help="tasks of the workload measurement")
    p.add_argument("--real-tasks", type=int, default=48, help="tasks of each real point")
    p.add_argument("--speed", type=float, default=10.0, help="real points: simulator speed")
    p.add_argument("--rounds", type=int, default=4, help="episodes simulated per in-flight slot")
    p.add_argument("--max-servers", type=int, default=64)
    p.add_argument("--no-ray", action="store_true", help="skip the Ray point")
    p.add_argument("--no-real", action="store_true", help="skip the real points")
    return p.parse_args()


if __name__ == "__main__":
    anyio.run(main, cli())
