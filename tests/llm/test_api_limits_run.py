"""2,000 episodes against a rate-limited simulated provider: slowed down, never timed out.

The run is the default 16-coalition math evaluation (125 tasks, two steps
each) as a user runs it, against the in-process simulator acting as a
provider with a limit of 3,000 requests per minute, its minute compressed to
15 s (``time_scale = 4``): the ~5,500 calls the run sends are far more than one
minute's 3,000, so requests wait for the limit (asserted below); measured on an
idle machine, 12 s wall for 14 s of CPU (``time_scale = 2``: 23 s; 1: 47 s). Episodes
in flight follow the endpoints' capacity (the default), every episode finishes
within its timeout and is counted.
The timeout is 30 s rather than seconds: on a loaded two-core machine the
first episodes of any run (imports, first expert calls) can take seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_2000_episodes_rate_limited_none_timed_out(tmp_path: Path) -> None:
    config = tmp_path / "limits.toml"
    config.write_text(
        "episode_timeout_s = 30.0\n[sim.limits]\nrpm = 3000\ntpm = 100000000\ntime_scale = 4\n"
    )
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentbus.run",
            "--config",
            str(config),
            "--sim-speed",
            "0",
            "--sim-transport",
            "inprocess",
            "--tasks",
            "125",
            "--max-steps",
            "2",
            "--progress",
            "off",
            "--no-preflight",
            "--no-plots",  # seconds of CPU that say nothing about the limit
            "--run-dir",
            str(run_dir),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert "episodes: 2000 run" in done.stdout
    assert "timeout" not in results["failures"]["by_kind"], results["failures"]
    assert results["failures"]["unresolved_cells"] == 0
    replicas = [r for m in results["llm"]["models"].values() for r in m["replicas"]]
    # the limit was what set the pace: requests waited for it, and it was read from headers
    assert all(r["pacing"]["limits"]["requests"] == 3000 for r in replicas)
    assert sum(r["waited_s"] for r in replicas) > 0
    assert "rate limits sim:" in done.stdout  # the run summary names the figures


def test_api_limits_benchmark_smoke() -> None:
    """benchmarks/api_limits.py runs its three arms end to end and prints the default's line."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "api_limits.py"), "--smoke"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    arms = [line.split()[0] for line in lines if "goodput" in line and "of the limit" in line]
    assert arms[:3] == ["fixed-100", "aimd", "default"]
    assert lines[-1].startswith("agentbus default: goodput ")
