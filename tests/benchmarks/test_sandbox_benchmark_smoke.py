"""benchmarks/sandbox.py still runs: tiny sizes, in a subprocess (not a measurement).

The hostile-memory part runs only where a memory cgroup holds its hogs.

It checks what a tiny run can show: every scripted episode passed its check
in both arms, nothing was left in a sandbox's PID namespace, the mount table
did not change, and the ratio line comes last.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from environments.sandbox import cgroup
from environments.sandbox import persistent_unavailable as unavailable

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))
def test_sandbox_benchmark_runs_both_arms_without_leaks() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "sandbox.py"), "--episodes", "12",
         "--concurrency", "6", "--json"],
        capture_output=True, text=True, timeout=180, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("SANDBOX-RESULT "))
    result = json.loads(line.removeprefix("SANDBOX-RESULT "))
    assert result["bare"]["failed"] == 0 and result["sandbox"]["failed"] == 0
    assert result["leaked"] == 0 and result["mounts_changed"] == 0
    assert proc.stdout.strip().splitlines()[-1].startswith("ratio sandbox / bare")


@pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))
@pytest.mark.skipif(cgroup.root() is None, reason="no memory cgroup can be made here")
def test_sandbox_benchmark_hostile_memory_stays_within_its_bound() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "sandbox.py"), "--hostile", "3",
         "--sandbox-mb", "64", "--budget-mb", "128", "--json"],
        capture_output=True, text=True, timeout=180, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("SANDBOX-MEMORY "))
    result = json.loads(line.removeprefix("SANDBOX-MEMORY "))
    assert result["most_alive"] == 2  # 128 MiB // 64 MiB
    assert result["walled"] + result["broken"] == result["commands"]  # every attack hit a wall
    assert result["peak_total_mb"] <= result["bound_mb"]
    assert proc.stdout.strip().splitlines()[-1].startswith("peak total of agentbus")
