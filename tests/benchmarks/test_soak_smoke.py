"""benchmarks/soak.py still runs: a tiny soak (2 tasks, 64 episodes) under the same faults.

Not a measurement (memory and lag figures of a one-minute run mean little);
it checks what a tiny run can show: no cell lost or counted twice under 10%
injected failures and 2% stalls, and none after a kill -9 and a resume.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_quick_soak_loses_and_doubles_nothing() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        check=False,
    )
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    last = out.strip().splitlines()[-1]
    assert last.startswith("SOAK lost 0 double 0 |"), last
    assert "kill -9 + resume: lost 0 double 0 differ 0" in last
    assert "faults the server injected:" in out and "event-loop lag" in out
    assert "RSS" in out
