"""benchmarks/scale_out.py still runs: a tiny workload, the curve at 1 and 2 servers.

Not a measurement; it keeps the script working and checks what even a tiny
run must show: the client CPU per episode is measured (not zero), agentbus
finishes more episodes per virtual second than CapaBench's design on the
same server, and doubling the servers about doubles agentbus's rate while
the sequential design stays where it was (16 episodes cannot fill a server).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # about 15 s of CPU: two small real runs, then the curve


def test_scale_out_smoke() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale_out.py"),
         "--tasks", "1", "--no-real", "--max-servers", "2", "--rounds", "2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    one, two = result["curve"]
    assert result["cpu_ms_per_episode"] > 0
    assert one["speedup"] > 2 and two["speedup"] > one["speedup"]
    assert 1.6 < two["agentbus_eps"] / one["agentbus_eps"] < 2.4
    assert 0.8 < two["sequential_eps"] / one["sequential_eps"] < 1.25
    assert "client cores needed" in proc.stdout
