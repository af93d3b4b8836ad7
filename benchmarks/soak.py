"""Soak: a long multi-model run under injected faults loses nothing and stays flat.

What it runs: the simulated model server in its own process
(``python -m agentbus.sim.serve``, as vLLM would run beside an evaluation)
with 10% of requests failing (4% answered 429, 3% answered 500, 3% dropped
connections) and 2% stalled (held longer than the client's read timeout, so
the client times out and retries). The evaluation talks to it through the
production path (``vllm:`` specs, the official ``openai`` SDK over HTTP):
math on the built-in generator, ``sim:weak`` as the default, two models under
test (``strong`` and ``strong-action``: 32 episodes per task). The server's
``--speed`` compresses time: ``--minutes 30 --speed 10`` plans the episodes
that 30 minutes of realistic serving hold (from the serving model's measured
rate, see ``EPISODES_PER_SERVING_MINUTE``) and runs them about 10 times faster
when the client keeps up; the script prints the simulated serving time it
actually covered (wall time x speed).

Phase 1, the soak: one evaluation in a child process, with a heartbeat task
on its event loop (event-loop lag) and an RSS sampler. It reports:

* lost cells: cells of the plan with no counting record in the log;
* double-counted cells: cells with more than one counting ``episode.ended``
  line in the log (the RecordBook keeps one; a second would mean work ran
  twice and a reader without the rule would count it twice);
* infrastructure failures by kind, at the LLM layer (retried calls, rate
  limits) and at the episode layer (episodes that failed and were retried:
  never counted, tallied by kind);
* RSS after warm-up (the median of the samples from 20% to 30% of the run)
  and at half time (45% to 55%) against the median of the last 10%: the
  growth over the second half must stay below 2% (flat once warm);
* event-loop lag of a 50 ms heartbeat: p50, p99, max.

Phase 2, kill -9 and resume: a smaller run of the same plan (its first
``--kill-tasks`` tasks: the generator is prefix-stable), killed with SIGKILL
once a third of its episodes have ended, then resumed the way a user does
(``python -m agentbus.run --resume DIR``). Every cell must count exactly
once, and every (model, coalition, task) outcome must equal the soak's
(temperature 0: outcomes do not depend on timing or faults).

Run: ``python benchmarks/soak.py [--minutes 30] [--speed 10]``; ``--quick``
for a tiny smoke run (2 tasks, speed 100, the same fault rates with a 1 s read
timeout and 2 s stalls, so a stall costs the smoke less wall time). The last
line prints the verdicts.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Import installed packages, never scripts that sit beside this file.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import orjson  # noqa: E402

from agentbus.core.events import EPISODE_ENDED  # noqa: E402

PYTHON = sys.executable
#: episodes whose answers a default simulated server (64 sequences, speed 1) can
#: generate per minute at full capacity (measured by this script: output tokens
#: per episode over capacity); sizes the run for --minutes
EPISODES_PER_SERVING_MINUTE = 115
TEST_MODELS = ("strong", "strong-action")
SLOTS = 4
#: 10% of requests fail, 2% stall (traces stay on, as in a default run)
FAULTS = {
    "rate_429": 0.04,
    "rate_500": 0.03,
    "rate_drop": 0.03,
    "rate_stall": 0.02,
    "seed": 11,
}
READ_TIMEOUT_S = 4.0  # a stall outlasts it: the client times out and retries
#: --quick: a shorter timeout (and stall), so each stall costs the smoke less wall time
QUICK_READ_TIMEOUT_S = 1.0
HEARTBEAT_S = 0.05


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def sim_server(
    tasks: int, speed: float, workdir: Path, read_timeout: float = READ_TIMEOUT_S
) -> Iterator[str]:
    """The simulator with faults in a child process; yields its base URL."""
    port = free_port()
    config = workdir / "sim.toml"
    lines = ["[faults]"]
    lines += [f"{k} = {v}" for k, v in FAULTS.items()]
    lines += [
        f"retry_after_s = {max(0.05, 1.0 / max(speed, 1.0))}",
        f"stall_s = {read_timeout * 2}",
    ]
    config.write_text("\n".join(lines) + "\n")
    cmd = [
        PYTHON,
        "-m",
        "agentbus.sim.serve",
        "--port",
        str(port),
        "--env",
        "math",
        "--tasks",
        str(tasks),
        "--speed",
        str(speed),
        "--config",
        str(config),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise SystemExit(f"the simulator exited: {err[-500:]}")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).close()
                break
            if time.monotonic() > deadline:
                raise SystemExit("the simulator did not start within 60 s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def server_metrics(url: str) -> dict[str, Any]:
    """The simulator's counters (faults injected, tokens, capacity) from /metrics.json."""
    base = url.removesuffix("/v1")
    with urllib.request.urlopen(f"{base}/metrics.json", timeout=10) as resp:
        data: dict[str, Any] = orjson.loads(resp.read())
    return data


def run_config(
    url: str, tasks: int, run_dir: Path, read_timeout: float = READ_TIMEOUT_S
) -> dict[str, Any]:
    """The evaluation: math, weak default, two test models, all on the faulty server."""
    return {
        "env": "math",
        "tasks": tasks,
        "seed": 0,
        "default": f"vllm:{url}#weak",
        "test": [f"vllm:{url}#{m}" for m in TEST_MODELS],
        "run_dir": str(run_dir),
        "progress": "off",
        "plots": False,
        "concurrency": 1000,
        "llm": {
            "limits": {
                "max_concurrency": 128,
                "read_timeout": read_timeout,
                "backoff_base": 0.05,
                "backoff_max": 1.0,
                "max_retries": 8,
            }
        },
    }


# ------------------------------------------------------------------ child


def child(config_path: Path, metrics_path: Path) -> None:
    """One evaluation in this process, with the heartbeat and the RSS sampler."""
    import anyio
    from rich.console import Console

    from agentbus.app.config import build_config
    from agentbus.app.evaluate import evaluate
    from agentbus.app.run import uvloop_available
    from agentbus.core.logs import configure

    configure("error")
    config = build_config(orjson.loads(config_path.read_bytes()))
    page = os.sysconf("SC_PAGE_SIZE")
    lags: list[tuple[float, float, float]] = []
    rss: list[tuple[float, int]] = []

    def rss_now() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * page

    async def monitor() -> None:
        n = 0
        while True:
            start, cpu = time.perf_counter(), time.thread_time()
            await anyio.sleep(HEARTBEAT_S)
            lag = time.perf_counter() - start - HEARTBEAT_S
            # the lag, and the part of it the loop thread spent on the CPU (as scale.py)
            lags.append((time.monotonic(), lag, min(lag, max(0.0, time.thread_time() - cpu))))
            n += 1
            if n % 10 == 0:
                rss.append((time.monotonic(), rss_now()))

    async def main() -> dict[str, Any]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(monitor)
            t0 = time.monotonic()
            report = await evaluate(config, Console(quiet=True))
            wall = time.monotonic() - t0
            tg.cancel_scope.cancel()
        return {
            "wall_s": wall,
            "t0": t0,
            "lags": lags,
            "rss": rss,
            "llm": report.results["llm"]["total"],
            "retried": report.retried,
            "given_up": report.given_up,
        }

    result = anyio.run(main, backend_options={"use_uvloop": uvloop_available()})
    metrics_path.write_bytes(orjson.dumps(result))


def spawn_child(config: dict[str, Any], workdir: Path, name: str) -> subprocess.Popen[bytes]:
    cfg = workdir / f"{name}.json"
    cfg.write_bytes(orjson.dumps(config))
    cmd = [PYTHON, __file__, "--child", str(cfg), str(workdir / f"{name}-metrics.json")]
    return subprocess.Popen(cmd, start_new_session=True)


# ---------------------------------------------------------------- checking


def plan_cells(url: str, tasks: int) -> set[str]:
    """Every cell id (episode id) of the plan, as the application names them."""
    from agentbus.app.evaluation import Agent, EvaluationPlan, cell_id
    from agentbus.core import registry
    from agentbus.core.environment import TaskSource

    config = run_config(url, tasks, Path("."))
    setup = registry.get("environments", "math").setup(TaskSource(count=tasks, seed=0))
    agent = Agent.resolve("praf", {})
    plan = EvaluationPlan(
        agent, agent.slots, config["default"], tuple(config["test"]), setup.tasks, 1
    )
    return {cell_id(plan, cell) for task in plan.tasks for cell in plan.task_cells(task)}


def read_log(run_dir: Path) -> tuple[Any, Counter[str]]:
    """The RecordBook of the log and the number of counting lines per cell."""
    from agentbus.core.record import EpisodeRecord, RecordBook

    book = RecordBook()
    lines: Counter[str] = Counter()
    for raw in (run_dir / "events.jsonl").read_bytes().splitlines():
        with contextlib.suppress(orjson.JSONDecodeError):
            event = orjson.loads(raw)
            if event.get("type") != EPISODE_ENDED:
                continue
            record = EpisodeRecord.parse(event)
            if record is None:
                continue
            book.add(record)
            if record.counts:
                lines[record.episode_id] += 1
    return book, lines


def short_model(spec: str | None) -> str:
    return (spec or "").rpartition("#")[2]


def cell_outcomes(book: Any) -> dict[tuple[str, str, str], float]:
    return {
        (short_model(r.test_model), r.coalition_key, r.task_id): r.reward for r in book.records()
    }


def expected_cells(tasks: int) -> int:
    return tasks * len(TEST_MODELS) * 2**SLOTS


def check_log(run_dir: Path, url: str, tasks: int) -> dict[str, Any]:
    """The plan's cells against the log, through the counting rule."""
    book, lines = read_log(run_dir)
    planned = plan_cells(url, tasks)
    counted = {r.episode_id for r in book.records()}
    return {
        "planned": len(planned),
        "counted": len(counted & planned),
        "lost": len(planned - counted),
        "unplanned": len(counted - planned),
        "double": sum(1 for n in lines.values() if n > 1),
        "unresolved": len(book.unresolved()),
        "episode_failures": dict(book.failures_by_kind),
        "book": book,
    }


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def memory(samples: list[tuple[float, int]], t0: float, wall: float) -> dict[str, float]:
    """RSS after warm-up (20-30% of the run) and at half time (45-55%) vs the end (last 10%)."""
    rel = [((t - t0) / wall, r) for t, r in samples]

    def median_mb(lo: float, hi: float, fallback: int) -> float:
        return statistics.median([r for f, r in rel if lo <= f <= hi] or [fallback]) / 2**20

    warm_mb = median_mb(0.2, 0.3, rel[0][1])
    half_mb = median_mb(0.45, 0.55, rel[len(rel) // 2][1])
    end_mb = median_mb(0.9, 1.0, rel[-1][1])
    return {
        "rss_warm_mb": warm_mb,
        "rss_half_mb": half_mb,
        "rss_end_mb": end_mb,
        "rss_peak_mb": max(r for _, r in samples) / 2**20,
        "growth": end_mb / warm_mb - 1,
        "second_half": end_mb / half_mb - 1,
    }


def ended_lines(run_dir: Path) -> int:
    path = run_dir / "events.jsonl"
    return path.read_bytes().count(f'"type":"{EPISODE_ENDED}"'.encode()) if path.exists() else 0


def kill_and_resume(url: str, tasks: int, workdir: Path, read_timeout: float) -> dict[str, Any]:
    """Run, SIGKILL once a third of the episodes ended, resume with the CLI."""
    run_dir = workdir / "killed"
    proc = spawn_child(run_config(url, tasks, run_dir, read_timeout), workdir, "killed")
    target = expected_cells(tasks) // 3
    deadline = time.monotonic() + 900
    while ended_lines(run_dir) < target:
        if proc.poll() is not None:
            raise SystemExit("the run to kill ended before it could be killed: use more tasks")
        if time.monotonic() > deadline:
            raise SystemExit("the run to kill made no progress in 15 minutes")
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before, _ = read_log(run_dir)
    resumed = subprocess.run(
        [PYTHON, "-m", "agentbus.run", "--resume", str(run_dir), "--no-preflight"],
        capture_output=True,
        text=True,
        check=False,
    )
    if resumed.returncode != 0:
        raise SystemExit(f"resume failed ({resumed.returncode}): {resumed.stderr[-1000:]}")
    result = check_log(run_dir, url, tasks)
    result["counted_before_kill"] = before.count
    result["signal"] = -proc.returncode
    return result


# ------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=30.0, help="realistic serving minutes")
    p.add_argument("--speed", type=float, default=10.0, help="simulator speed factor")
    p.add_argument("--tasks", type=int, default=None, help="tasks (default: from --minutes)")
    p.add_argument("--kill-tasks", type=int, default=None, help="tasks of the kill -9 run")
    p.add_argument("--quick", action="store_true", help="a tiny run (the smoke test)")
    p.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    per_task = len(TEST_MODELS) * 2**SLOTS
    if args.quick:
        args.minutes, args.speed = 1.0, 100.0
        args.tasks, args.kill_tasks = args.tasks or 2, args.kill_tasks or 2
    tasks = args.tasks or max(2, math.ceil(args.minutes * EPISODES_PER_SERVING_MINUTE / per_task))
    kill_tasks = min(tasks, args.kill_tasks or max(3, tasks // 10))
    read_timeout = QUICK_READ_TIMEOUT_S if args.quick else READ_TIMEOUT_S
    print(
        f"soak: math, default weak, test {', '.join(TEST_MODELS)}; {tasks} tasks = "
        f"{tasks * per_task} episodes; server speed {args.speed:g}; faults: "
        + ", ".join(f"{k} {v:g}" for k, v in FAULTS.items() if k != "seed"),
        flush=True,
    )
    workdir = Path(tempfile.mkdtemp(prefix="agentbus-soak-"))
    try:
        with sim_server(tasks, args.speed, workdir, read_timeout) as url:
            config = run_config(url, tasks, workdir / "soak", read_timeout)
            proc = spawn_child(config, workdir, "soak")
            if proc.wait() != 0:
                raise SystemExit(f"the soak run failed with exit status {proc.returncode}")
            m = orjson.loads((workdir / "soak-metrics.json").read_bytes())
            soak = check_log(workdir / "soak", url, tasks)
            server = server_metrics(url)
            killed = kill_and_resume(url, kill_tasks, workdir, read_timeout)
        reference = cell_outcomes(soak["book"])
        again = cell_outcomes(killed["book"])
        mismatched = sum(1 for k, v in again.items() if reference.get(k) != v)
    except BaseException:
        print(f"soak: stopped; its run directories are kept in {workdir}", file=sys.stderr)
        raise
    shutil.rmtree(workdir, ignore_errors=True)
    mem = memory([tuple(s) for s in m["rss"]], m["t0"], m["wall_s"])
    lags_ms = [lag * 1000 for _, lag, _ in m["lags"]]
    busy_ms = [busy * 1000 for _, _, busy in m["lags"]]
    steady_ms = [lag * 1000 for t, lag, _ in m["lags"] if (t - m["t0"]) / m["wall_s"] >= 0.2]
    llm = m["llm"]
    serving_min = server["completion_tokens"] / server["capacity_tokens_per_s"] / 60
    print(
        f"soak run: {m['wall_s']:.0f} s wall; {server['completion_tokens']:,} output tokens = "
        f"{serving_min:.1f} min of a realistic server (speed 1) at full capacity "
        f"({server['capacity_tokens_per_s']:,.0f} tokens/s); {soak['counted']} of "
        f"{soak['planned']} planned cells counted"
    )
    print(f"faults the server injected: {server['faults_injected']}")
    print(
        f"LLM calls: {llm['requested']} requested, {llm['sent']} sent, {llm['retries']} retries "
        f"({llm['rate_limited']} rate-limited, {llm['errors']} failed after retries)"
    )
    print(
        f"episode-level infrastructure failures (retried, never counted): "
        f"{soak['episode_failures'] or 'none'}; cells retried {m['retried']}, given up "
        f"{m['given_up']}"
    )
    print(
        f"memory: RSS {mem['rss_warm_mb']:.0f} MB after warm-up, {mem['rss_half_mb']:.0f} MB at "
        f"half time, {mem['rss_end_mb']:.0f} MB at the end (peak {mem['rss_peak_mb']:.0f} MB): "
        f"{mem['growth'] * 100:+.1f}% from warm-up, {mem['second_half'] * 100:+.1f}% over the "
        "second half (target < 2%)"
    )
    print(
        f"event-loop lag ({HEARTBEAT_S * 1000:.0f} ms heartbeat, {len(lags_ms)} beats): "
        f"p50 {percentile(lags_ms, 0.5):.1f} ms, p99 {percentile(lags_ms, 0.99):.1f} ms, "
        f"max {max(lags_ms):.1f} ms; after warm-up (the last 80%): p99 "
        f"{percentile(steady_ms, 0.99):.1f} ms; the loop thread on the CPU: p99 "
        f"{percentile(busy_ms, 0.99):.1f} ms (target < 50 ms; the rest is waiting for a core)"
    )
    print(
        f"kill -9 at {killed['counted_before_kill']} of {killed['planned']} cells, resumed: "
        f"{killed['counted']} counted, {killed['lost']} lost, {killed['double']} double, "
        f"{mismatched} outcomes differ from the soak's"
    )
    flat = mem["second_half"] < 0.02
    ok = (
        soak["lost"] == 0
        and soak["double"] == 0
        and soak["unplanned"] == 0
        and killed["lost"] == 0
        and killed["double"] == 0
        and mismatched == 0
        and killed["signal"] == signal.SIGKILL
    )
    print(
        f"SOAK lost {soak['lost']} double {soak['double']} | memory "
        f"{'flat' if flat else 'GROWS'} ({mem['second_half'] * 100:+.1f}% second half) | lag p99 "
        f"{percentile(lags_ms, 0.99):.1f} ms (on CPU {percentile(busy_ms, 0.99):.1f}) | kill -9 + "
        f"resume: lost {killed['lost']} "
        f"double {killed['double']} differ {mismatched}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
