"""Shared parts of the LLM benchmarks (saturation, vs_sequential, shared_calls).

* :class:`SimServer` runs the simulated model server in a child process, the
  way a vLLM server runs beside an evaluation: it has its own CPU, so the
  client side is measured, not the server's Python. The child loads the math
  tasks the run will use (generator, same count and seed), so its expert
  recognises them.
* :class:`CaptureBackend` is the vLLM backend (``AsyncOpenAI``, the production
  path) registered as ``capture``; it records every request it sends upstream
  (after the shared-call cache) with its timing, so a raw load generator can
  replay exactly those prompts.
* :func:`run_agentbus` runs the full 16-coalition math evaluation through
  ``agentbus.app.evaluate`` against such a server.

Run ``python benchmarks/llm_bench.py serve ...`` to start the child by hand.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

import orjson

# Import installed packages, never scripts that sit beside this file.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from agentbus import registry  # noqa: E402
from agentbus.core.events import EPISODE_ENDED  # noqa: E402
from agentbus.llm.backends.openai_backend import VLLMBackend  # noqa: E402
from agentbus.llm.types import ChatMessage, Completion, SamplingParams  # noqa: E402

PYTHON = sys.executable
HERE = Path(__file__).resolve().parent


# ------------------------------------------------------------------- capture
@dataclass(slots=True)
class Sent:
    """One upstream request as agentbus sent it, with when it went and came back."""

    model: str
    messages: list[ChatMessage]
    params: SamplingParams
    start: float
    end: float = 0.0
    completion_tokens: int = 0


class CaptureBackend(VLLMBackend):
    """The vLLM backend, recording each request it sends (class-level log)."""

    name: ClassVar[str] = "capture"
    api_key_env: ClassVar[str | None] = None
    log: ClassVar[list[Sent]] = []

    def _api_key(self) -> str:
        return "bench"

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        record = Sent(self.spec.model, list(messages), params, time.perf_counter())
        result = await super().complete(messages, params)
        record.end = time.perf_counter()
        record.completion_tokens = result.completion_tokens
        CaptureBackend.log.append(record)
        return result


def install_capture() -> None:
    """Register ``capture:URL#MODEL`` (idempotent) and clear the log."""
    if "capture" not in registry.names("backends"):
        registry.register("backends", "capture", CaptureBackend)
    CaptureBackend.log = []


def window(records: Sequence[Sent]) -> float:
    """Seconds from the first request sent to the last answer received."""
    return max(r.end for r in records) - min(r.start for r in records)


def middle_rate(ends: Sequence[float]) -> float:
    """Answers per second between the 10th and the 90th percentile of completion times.

    The steady state of a run, without its ramp-up and its tail.
    """
    ordered = sorted(ends)
    lo, hi = len(ordered) // 10, (9 * len(ordered)) // 10
    span = ordered[hi] - ordered[lo] if hi > lo else 0.0
    return (hi - lo) / span if span > 0 else 0.0


def mean_in_flight(records: Sequence[Sent]) -> float:
    """Requests in flight on average over the window (sum of latencies / window)."""
    return sum(r.end - r.start for r in records) / window(records)


# ------------------------------------------------------------- sim server
@dataclass
class ServerSpec:
    """How the simulated server serves (passed to the child's ServingConfig)."""

    tasks: int
    seed: int = 0
    speed: float = 1.0
    max_num_seqs: int = 64
    extra: dict[str, float] = field(default_factory=dict)

    def argv(self) -> list[str]:
        args = [
            "--tasks",
            str(self.tasks),
            "--seed",
            str(self.seed),
            "--speed",
            str(self.speed),
            "--max-num-seqs",
            str(self.max_num_seqs),
        ]
        for key, value in self.extra.items():
            args += ["--set", f"{key}={value}"]
        return args


class SimServer:
    """The simulator in a child process; ``with SimServer(spec) as s: s.url``."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.url = ""
        self.info: dict[str, Any] = {}
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> SimServer:
        cmd = [PYTHON, str(HERE / "llm_bench.py"), "serve", *self.spec.argv()]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait()
            raise RuntimeError("the simulator child exited before serving")
        self.info = orjson.loads(line)
        self.url = str(self.info["url"])
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def describe(self) -> str:
        i = self.info
        capacity = (
            "no serving delays (speed 0)"
            if i["wall_capacity"] is None
            else f"capacity {i['wall_capacity']:,.0f} output tokens/s at saturation"
        )
        return (
            f"sim server {self.url} (separate process): speed {i['speed']:g}, "
            f"max_num_seqs {i['max_num_seqs']}, decode {i['decode_s_per_token'] * 1000:.0f} "
            f"ms/token (+{i['batch_slowdown'] * 100:.1f}% per extra sequence), {capacity}"
        )

    @property
    def capacity(self) -> float:
        """Output tokens per wall-clock second at saturation (inf at speed 0)."""
        value = self.info["wall_capacity"]
        return float("inf") if value is None else float(value)


def math_setup(count: int, seed: int) -> Any:
    """The math environment's setup (tasks + factory), exactly as a run with these settings."""
    from agentbus.core.environment import TaskSource

    env_cls = registry.get("environments", "math")
    return env_cls.setup(TaskSource(count=count, seed=seed))


def math_tasks(count: int, seed: int) -> list[Any]:
    return list(math_setup(count, seed).tasks)


def _serve(args: argparse.Namespace) -> None:
    import anyio

    from agentbus.sim.config import SimConfig
    from agentbus.sim.model import SimModel, load_experts
    from agentbus.sim.service import sim_service

    overrides: dict[str, float] = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = float(value)
    config = SimConfig(
        speed=args.speed,
        max_num_seqs=args.max_num_seqs,
        experts=["math"],
        port=0,
        **overrides,
    )
    model = SimModel(config.profiles, load_experts(config.experts), coupled=config.coupled)
    model.add_tasks("math", math_tasks(args.tasks, args.seed))

    async def serve() -> None:
        async with sim_service(config, model) as sim:
            serving = sim.engine.serving
            info = {
                "url": sim.base_url,
                "speed": config.speed,
                "max_num_seqs": config.max_num_seqs,
                "decode_s_per_token": config.decode_s_per_token,
                "batch_slowdown": config.batch_slowdown,
                "wall_capacity": serving.wall_capacity_tokens_per_s,  # None: no delays
            }
            sys.stdout.buffer.write(orjson.dumps(info) + b"\n")
            sys.stdout.flush()
            await anyio.sleep_forever()

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        pass


# ------------------------------------------------------------ agentbus arm
@dataclass
class AgentbusRun:
    report: Any
    wall_s: float


def quiet_logs() -> None:
    """Warnings and errors only: the benchmark's own lines are what matters."""
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


async def run_agentbus(
    url: str,
    tasks: int,
    run_dir: Path,
    *,
    seed: int = 0,
    concurrency: int = 1000,
    backend: str = "capture",
    llm: dict[str, Any] | None = None,
    plots: bool = True,
) -> AgentbusRun:
    """The full 16-coalition math evaluation (weak default, strong test) via ``evaluate``."""
    from rich.console import Console

    from agentbus.app.config import build_config
    from agentbus.app.evaluate import evaluate

    data: dict[str, Any] = {
        "env": "math",
        "tasks": tasks,
        "seed": seed,
        "default": f"{backend}:{url}#weak",
        "test": [f"{backend}:{url}#strong"],
        "concurrency": concurrency,
        "progress": "off",
        "run_dir": str(run_dir),
        "plots": plots,
    }
    if llm:
        data["llm"] = llm
    config = build_config(data)
    t0 = time.perf_counter()
    report = await evaluate(config, Console(quiet=True))
    return AgentbusRun(report, time.perf_counter() - t0)


def episode_outcomes(run_dir: Path) -> dict[tuple[str, str], bool]:
    """(coalition key, task id) -> success, from a run's event log."""
    out: dict[tuple[str, str], bool] = {}
    with (run_dir / "events.jsonl").open("rb") as fh:
        for line in fh:
            event = orjson.loads(line)
            if event.get("type") != EPISODE_ENDED:
                continue
            key = "+".join(event["coalition"])
            out[(key, event["task_id"])] = bool(event["outcome"]["success"])
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="start the simulated server for the LLM benchmarks")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--tasks", type=int, required=True)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--speed", type=float, default=1.0)
    s.add_argument("--max-num-seqs", type=int, default=64)
    s.add_argument("--set", action="append", default=[], help="ServingConfig KEY=VALUE")
    args = ap.parse_args(argv)
    _serve(args)


if __name__ == "__main__":
    main()
