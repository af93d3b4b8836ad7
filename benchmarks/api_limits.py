"""A 16-coalition run against a rate-limited provider: three client behaviours side by side.

The provider is the simulator behind OpenAI's API (``python -m
agentbus.sim.serve`` in its own process) with an OpenAI tier-1-like limit,
500 requests and 200,000 tokens per minute per key, tier-1 latency (lognormal,
heavy-tailed). The run is the default PRAF agent on math, 4 slots = 16
coalitions, ``openai:URL#weak`` as default and ``openai:URL#strong`` as test
model, through the official SDK. Three arms, each against a fresh provider:

(a) ``fixed-100``: a fixed 100 requests in flight per model, no header
    pacing, episodes admitted up to ``concurrency`` as before;
(b) ``aimd``: adaptive concurrency (AIMD) without header pacing;
(c) ``default``: what agentbus does by default for openai: endpoints:
    adaptive concurrency, pacing from the rate-limit headers, episodes in
    flight following the endpoints' capacity.

Printed per arm: goodput as a fraction of the limit (what the provider
admitted and counted, in its binding dimension, over what it could have
admitted in that time: one bucket of burst plus the refill), 429s per 1,000
requests, episodes that timed out, wall time.

Time compression: the provider's minute lasts ``60 / SCALE`` wall seconds and
every latency is divided by SCALE (the simulator's ``speed``); the client's
times are scaled alike (episode timeout 600 provider-seconds, backoff base
0.5 s and cap 30 s, AIMD cooldown 1 s, all divided by SCALE). Every ratio
(requests per latency, burst per refill, timeout per call) is the one an
unscaled run would have; only the wall clock shrinks.

    python benchmarks/api_limits.py            # the figures in benchmarks/README.md
    python benchmarks/api_limits.py --smoke    # seconds; what the test runs
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console

from agentbus.app.config import RunConfig
from agentbus.app.evaluate import evaluate
from agentbus.core.logs import configure

RPM, TPM = 500, 200_000


@dataclass(frozen=True)
class Arm:
    name: str
    what: str
    adaptive: bool
    pace: bool
    follow_capacity: bool


ARMS = (
    Arm("fixed-100", "fixed concurrency 100, no pacing", False, False, False),
    Arm("aimd", "AIMD, no header pacing", True, False, True),
    Arm("default", "agentbus default: AIMD + header pacing + admission", True, True, True),
)


def start_provider(
    workdir: Path, scale: float, tasks: int, rpm: float, tpm: float
) -> tuple[subprocess.Popen[str], str]:
    """The simulated provider in its own process; returns it and its base URL."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "provider.toml"
    config.write_text(
        f"speed = {scale}\n[limits]\npreset = 'openai-tier1'\nrpm = {rpm}\ntpm = {tpm}\n"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentbus.sim.serve",
            "--port",
            "0",
            "--config",
            str(config),
            "--env",
            "math",
            "--tasks",
            str(tasks),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        found = re.search(r"serving at (\S+)", line)
        if found:
            return proc, found.group(1)
    proc.kill()
    raise RuntimeError("the simulated provider did not start")


def run_config(arm: Arm, url: str, scale: float, tasks: int, run_dir: Path) -> RunConfig:
    limits: dict[str, Any] = {
        "max_concurrency": 100 if not arm.adaptive else 256,
        "adaptive": {"enabled": arm.adaptive, "cooldown_s": 1.0 / scale},
        "pace_from_headers": arm.pace,
        "backoff_base": 0.5 / scale,
        "backoff_max": 30.0 / scale,
    }
    return RunConfig.model_validate(
        {
            "env": "math",
            "tasks": tasks,
            "default": f"openai:{url}#weak",
            "test": [f"openai:{url}#strong"],
            "episode_timeout_s": 600.0 / scale,
            "progress": "off",
            "plots": False,
            "run_dir": str(run_dir),
            "follow_capacity": arm.follow_capacity,
            "llm": {"limits": limits},
        }
    )


def goodput(metrics: dict[str, Any], elapsed_s: float, scale: float) -> tuple[float, str]:
    """Admitted and counted use over the most the provider could admit, binding dimension."""
    limits = metrics["provider_limits"]
    minutes = elapsed_s * scale / 60.0
    best, which = 0.0, ""
    for dim, limit in limits["limits_per_minute"].items():
        possible = limit * (1.0 + minutes)  # a full bucket at the start, then the refill
        used = limits["charged"][dim] / possible
        if used > best:
            best, which = used, dim
    return best, which


def run_arm(
    arm: Arm, scale: float, tasks: int, provider: tuple[subprocess.Popen[str], str], workdir: Path
) -> dict[str, Any]:
    """One arm against its own fresh provider (started beforehand, unused until now)."""
    proc, url = provider
    try:
        config = run_config(arm, url, scale, tasks, workdir / arm.name)
        started = time.monotonic()
        with open(os.devnull, "w") as quiet:
            report = anyio.run(lambda: evaluate(config, Console(file=quiet, width=120)))
        elapsed = time.monotonic() - started
        with urllib.request.urlopen(url.removesuffix("/v1") + "/metrics.json", timeout=10) as resp:
            metrics = json.loads(resp.read())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    limits = metrics["provider_limits"]
    requests = limits["admitted"] + limits["rejected_429"]
    fraction, dim = goodput(metrics, elapsed, scale)
    failures = report.results.get("failures", {}).get("by_kind", {})
    return {
        "arm": arm.name,
        "what": arm.what,
        "goodput": fraction,
        "binding": dim,
        "requests": requests,
        "per_1000_429": 1000.0 * limits["rejected_429"] / requests if requests else 0.0,
        "timed_out": int(failures.get("timeout", 0)),
        "episodes": report.episodes_run,
        "planned": tasks * 16,
        "failed_calls": int(sum(failures.values())),
        "stopped": report.stopped_early,
        "wall_s": elapsed,
        "provider_minutes": elapsed * scale / 60.0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=4.0, help="provider minutes per wall minute")
    ap.add_argument("--tasks", type=int, default=40, help="math tasks (x16 coalitions)")
    ap.add_argument("--rpm", type=float, default=RPM, help="provider requests per minute")
    ap.add_argument("--tpm", type=float, default=TPM, help="provider tokens per minute")
    ap.add_argument(
        "--smoke", action="store_true", help="tiny and fast (the test): 2 tasks, 100 RPM, 40k TPM"
    )
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = ap.parse_args(argv)
    scale, tasks, rpm, tpm = (args.scale, args.tasks, args.rpm, args.tpm)
    if args.smoke:
        scale, tasks, rpm, tpm = 60.0, 2, 100.0, 40_000.0
    os.environ.setdefault("OPENAI_API_KEY", "sim-key")
    configure("warning")
    print(
        f"provider: {rpm:,.0f} RPM, {tpm:,.0f} TPM per key (OpenAI tier-1-like), tier-1 latency;"
        f" time scale {scale:g} (a provider minute = {60 / scale:g} s)"
    )
    print(f"run: math, {tasks} tasks x 16 coalitions, openai:...#weak vs openai:...#strong")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # the three providers start together (each a process start-up of about a second);
        # a provider left idle only keeps its full bucket, as a fresh one has
        with ThreadPoolExecutor(len(ARMS)) as pool:
            starts = [
                pool.submit(
                    start_provider, Path(tmp) / f"provider-{arm.name}", scale, tasks, rpm, tpm
                )
                for arm in ARMS
            ]
        providers = [start.result() for start in starts]
        try:
            for arm, provider in zip(ARMS, providers, strict=True):
                row = run_arm(arm, scale, tasks, provider, Path(tmp))
                rows.append(row)
                print(
                    f"{row['arm']:>10}  goodput {row['goodput']:.3f} of the limit"
                    f" ({row['binding']})"
                    f" | 429s per 1,000 requests {row['per_1000_429']:6.1f}"
                    f" | timed-out episodes {row['timed_out']}"
                    f" | {row['requests']} requests, {row['episodes']} episodes"
                    f" ({row['failed_calls']} failed on the infrastructure),"
                    f" {row['wall_s']:.1f} s wall ({row['provider_minutes']:.1f} provider min)"
                    f"  [{row['what']}]",
                    flush=True,
                )
                if row["stopped"]:
                    print(f"{'':>12}stopped early: {row['stopped']}")
        finally:
            for proc, _ in providers:  # those of arms an error kept from running
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    default = rows[-1]
    print(
        f"agentbus default: goodput {default['goodput']:.3f} of the limit (target >= 0.95),"
        f" {default['per_1000_429'] / 10:.2f}% 429s (target < 1%),"
        f" {default['timed_out']} timed-out episodes (target 0)"
    )
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
