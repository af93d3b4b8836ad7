"""Two small finished runs for the viewer, export and comparison tests.

A: the default math run on 4 tasks (every coalition, traced); B: the same tasks
sampled at temperature 0.7 (another course, so the two runs' values differ).
Both are real runs through the CLI as a user starts them, with the simulator
at full speed (no simulated latency), about 4 s of CPU each. A test process
makes them once (:func:`shared_runs`), whichever test file asks first; the
tests only read them (``agentbus.report`` rebuilds the same results).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--tasks", "4", "--no-plots", "--progress", "off", "--sim-speed", "0"]
FAST += ["--sim-transport", "inprocess"]


def make_run(run_dir: Path, *extra: str) -> Path:
    cmd = [sys.executable, "-m", "agentbus.run", *FAST, *extra, "--run-dir", str(run_dir)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return run_dir


_made: list[tuple[Path, Path]] = []


def shared_runs(factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The two runs, made on first use in this process (the temporary base lives all session)."""
    if not _made:
        _made.append(make_runs(factory.mktemp("view-runs")))
    return _made[0]


def make_runs(base: Path) -> tuple[Path, Path]:
    a = make_run(base / "run-a")
    b = make_run(base / "run-b", "--temperature", "0.7", "--sampling-seed", "7")
    return a, b
