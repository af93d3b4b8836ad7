"""Against the original design: CapaBench's execution model vs agentbus at concurrency 1,000.

The same simulated server (its own process, realistic speed, default serving
model unless told otherwise), the same math tasks, the same PRAF modules and
math environment in both arms:

* sequential (CapaBench's way): 16 processes, one per coalition, each running
  its episodes one after another with a synchronous ``openai.OpenAI`` client
  (one blocking call at a time; no shared calls between processes). Each
  process runs the first ``--seq-tasks`` tasks; its episode loop is timed
  after its imports. Sequential wall-clock is exactly linear in the number of
  tasks (every episode waits for the one before), so the time for all
  ``--tasks`` tasks is extrapolated linearly from the slowest process, and
  printed as such.
* agentbus: the full evaluation of ``--tasks`` tasks via ``evaluate``,
  concurrency 1,000, ``AsyncOpenAI`` (vLLM backend), shared calls on.

At temperature 0 the simulator is deterministic given the prompt, so both
arms must reach the same success on every (coalition, task) both ran; the
script checks the per-coalition success rates on those tasks.

The ratio is bounded by the server: the sequential arm already keeps 16
requests in flight, so the speed-up cannot exceed (server capacity / the
sequential arm's tokens/s) x (calls requested / calls sent). Both factors are
printed. ``--max-num-seqs`` and ``--batch-slowdown`` model a larger server
(give agentbus more in flight per model with ``--endpoint-limit`` then).

Run: ``python benchmarks/vs_sequential.py [--tasks N] [--seq-tasks K]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import anyio
import orjson

# Import installed packages, never scripts that sit beside this file.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

sys.path.append(str(_HERE))

from llm_bench import (  # noqa: E402
    ServerSpec,
    SimServer,
    episode_outcomes,
    math_setup,
    quiet_logs,
    run_agentbus,
)

from agentbus.llm.config import SamplingDefaults  # noqa: E402
from agentbus.llm.types import ChatMessage, Completion, SamplingParams  # noqa: E402

DEFAULT, TEST = "weak", "strong"


class SyncOpenAILLM:
    """An :class:`~agentbus.llm.types.LLM` that blocks on a synchronous ``openai.OpenAI``.

    This is the original code's client: while a call is out, nothing else in
    the process runs (there is nothing else: one episode at a time).
    """

    def __init__(self, url: str, model: str) -> None:
        from openai import OpenAI

        self.client = OpenAI(api_key="bench", base_url=url, max_retries=3, timeout=300.0)
        self.model = model
        self.defaults = SamplingDefaults().params()
        self.prompt_tokens = 0
        self.completion_tokens = 0

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        p = params or self.defaults
        kwargs: dict[str, Any] = {
            "temperature": p.temperature,
            "top_p": p.top_p,
            "max_tokens": p.max_tokens,
        }
        if p.seed is not None:
            kwargs["seed"] = p.seed
        if p.stop:
            kwargs["stop"] = list(p.stop)
        if p.extra:
            kwargs["extra_body"] = dict(p.extra)
        start = time.perf_counter()
        resp = self.client.chat.completions.create(
            model=self.model,
            messages=cast(Any, [{"role": m["role"], "content": m["content"]} for m in messages]),
            **kwargs,
        )
        usage = resp.usage
        self.prompt_tokens += usage.prompt_tokens if usage else 0
        self.completion_tokens += usage.completion_tokens if usage else 0
        return Completion(
            text=resp.choices[0].message.content or "",
            model=self.model,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            latency_s=time.perf_counter() - start,
            finish_reason=resp.choices[0].finish_reason or "stop",
        )


async def worker(index: int, url: str, tasks: int, seq_tasks: int, seed: int) -> dict[str, Any]:
    """One coalition's process: its episodes, one at a time."""
    from agentbus.app.evaluation import Agent, EvaluationPlan, SpecFactory
    from agentbus.core.coalitions import coalition_key
    from agentbus.core.episode import Episode

    setup = math_setup(tasks, seed)
    agent = Agent.resolve("praf", {})
    chosen = list(setup.tasks)[:seq_tasks]
    plan = EvaluationPlan(agent, agent.slots, DEFAULT, (TEST,), chosen)
    clients: dict[str, SyncOpenAILLM] = {}

    def client(model: str) -> SyncOpenAILLM:
        if model not in clients:
            clients[model] = SyncOpenAILLM(url, model)
        return clients[model]

    factory = SpecFactory(plan, setup.factory, client)
    coalition = plan.coalitions[index]
    results: dict[str, bool] = {}
    t0 = time.perf_counter()
    for task in chosen:
        outcome = await Episode(factory.build(TEST, coalition, task, 0)).run()
        if outcome.error is not None:
            raise RuntimeError(f"episode failed on the infrastructure: {outcome.error}")
        results[task.id] = bool(outcome.success)
    loop_s = time.perf_counter() - t0
    tokens = sum(c.completion_tokens for c in clients.values())
    return {
        "coalition": coalition_key(plan.varied, coalition),
        "results": results,
        "loop_s": loop_s,
        "completion_tokens": tokens,
    }


def run_sequential(
    url: str, tasks: int, seq_tasks: int, seed: int, coalitions: int = 16
) -> tuple[float, list[Any]]:
    """One worker process per coalition, all at once; (launch-to-last-exit s, reports)."""
    cmd = [sys.executable, __file__, "--worker"]
    args = ["--url", url, "--tasks", str(tasks), "--seq-tasks", str(seq_tasks)]
    args += ["--seed", str(seed)]
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen([*cmd, str(i), *args], stdout=subprocess.PIPE) for i in range(coalitions)
    ]
    reports = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a sequential worker failed (exit {proc.returncode})")
        reports.append(orjson.loads(out.splitlines()[-1]))
    return time.perf_counter() - t0, reports


async def main(args: argparse.Namespace) -> None:
    quiet_logs()
    n, k = args.tasks, min(args.seq_tasks, args.tasks)
    extra = {} if args.batch_slowdown is None else {"batch_slowdown": args.batch_slowdown}
    spec = ServerSpec(
        tasks=n, seed=args.seed, speed=args.speed, max_num_seqs=args.max_num_seqs, extra=extra
    )
    with tempfile.TemporaryDirectory() as tmp:
        with SimServer(spec) as server:
            print(server.describe())
            capacity = server.capacity
            print(
                f"sequential: {args.coalitions} processes (one per coalition), "
                f"sync openai.OpenAI, {k} tasks each"
            )
            launch_s, reports = await anyio.to_thread.run_sync(
                run_sequential, server.url, n, k, args.seed, args.coalitions
            )
        loop_s = max(r["loop_s"] for r in reports)
        mean_episode_s = sum(r["loop_s"] for r in reports) / (len(reports) * k)
        seq_tokens = sum(r["completion_tokens"] for r in reports)
        seq_tok_s = seq_tokens / loop_s
        # the arm ends with its slowest process; n x the mean episode time is a lower
        # bound of that for n tasks (favours the sequential arm)
        seq_all_s = loop_s if k == n else max(loop_s, n * mean_episode_s)
        print(
            f"  {len(reports) * k} episodes: slowest process {loop_s:.1f} s, "
            f"mean {mean_episode_s:.1f} s/episode; launch to last exit {launch_s:.1f} s "
            f"(imports, sympy workers); {seq_tok_s:,.0f} output tokens/s"
        )
        if k < n:
            print(
                f"  extrapolated to {n} tasks: {n} x mean episode time = {seq_all_s:.0f} s "
                "(a lower bound: the slowest coalition decides)"
            )
        with SimServer(spec) as server:
            print(
                f"agentbus: {n} tasks x 16 coalitions, concurrency 1000, AsyncOpenAI, "
                f"{args.endpoint_limit} requests in flight per model at most"
            )
            run = await run_agentbus(
                server.url,
                n,
                Path(tmp) / "run",
                seed=args.seed,
                backend="vllm",
                llm={"limits": {"max_concurrency": args.endpoint_limit}},
                plots=not args.no_plots,
            )
        ours = episode_outcomes(Path(tmp) / "run")
        llm = run.report.results["llm"]["total"]
        ours_tok_s = llm["completion_tokens"] / run.wall_s
        print(
            f"  {run.report.episodes_run} episodes in {run.wall_s:.1f} s (whole run); "
            f"LLM calls requested {llm['requested']}, sent {llm['sent']}; "
            f"{ours_tok_s:,.0f} output tokens/s"
        )
    # same success per coalition on the tasks both arms ran
    mismatches = 0
    print(f"per-coalition success on the {k} shared tasks (sequential / agentbus):")
    rows = []
    for r in sorted(reports, key=lambda r: (r["coalition"].count("+"), r["coalition"])):
        seq = r["results"]
        agb = {t: ours[(r["coalition"], t)] for t in seq}
        mismatches += sum(seq[t] != agb[t] for t in seq)
        rows.append(f"{r['coalition'] or '(none)'} {sum(seq.values())}/{sum(agb.values())}")
    print("  " + ", ".join(rows))
    same = "identical" if mismatches == 0 else f"{mismatches} episodes DIFFER"
    bound = capacity / seq_tok_s * llm["requested"] / max(llm["sent"], 1)
    print(f"success per (coalition, task): {same}")
    if bound != float("inf"):
        print(
            f"bound from the server: capacity/sequential tokens/s x requested/sent = {bound:.1f}x"
        )
    label = "extrapolated " if k < n else ""
    print(
        f"ratio wall-clock sequential/agentbus on {n} tasks: "
        f"{seq_all_s / run.wall_s:.1f}x ({label}{seq_all_s:.0f} s vs {run.wall_s:.0f} s)"
    )


def _worker_main(args: argparse.Namespace) -> None:
    quiet_logs()
    report = anyio.run(worker, args.worker, args.url, args.tasks, args.seq_tasks, args.seed)
    sys.stdout.buffer.write(orjson.dumps(report) + b"\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=12, help="tasks of the agentbus arm")
    ap.add_argument("--seq-tasks", type=int, default=1, help="tasks each sequential process runs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--speed", type=float, default=1.0, help="server time scale (1 = realistic)")
    ap.add_argument("--max-num-seqs", type=int, default=64, help="server batch size")
    ap.add_argument("--batch-slowdown", type=float, default=None, help="server decode slowdown")
    ap.add_argument(
        "--endpoint-limit", type=int, default=64, help="agentbus requests in flight per model"
    )
    ap.add_argument(
        "--coalitions", type=int, default=16, help="sequential processes (16 = all; fewer: smoke)"
    )
    ap.add_argument(
        "--no-plots",
        action="store_true",
        help="skip the runs' plots (their directory is deleted anyway; seconds of the smoke test)",
    )
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--url", default=None, help=argparse.SUPPRESS)
    parsed = ap.parse_args()
    if parsed.worker is not None:
        _worker_main(parsed)
    else:
        anyio.run(main, parsed)
