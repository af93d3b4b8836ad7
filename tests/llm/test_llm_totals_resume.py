"""After a resume, results.json's ``llm.run`` covers the whole run (issue 34 item 6).

A run is stopped with Ctrl-C part way and resumed, through the CLI: the
resumed process's router saw only its own calls (``llm.total``), while
``llm.run`` covers every process and agrees with the cost line's calls sent.
Before, ``llm`` covered the last process only.

The bill is the log (issue 39 item 2): every completed call of both
processes is billed once. Summing the records billed less: the calls of
episodes the Ctrl-C cut short were paid in the first process and read back
from the cache as free after the resume. That the bill equals an
uninterrupted run's to the call is tests/app/test_bill_resume_servers.py.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
# realistic serving speed (the default), so the first progress line comes well before the end
# and the Ctrl-C lands mid-run; at --sim-speed 0 an idle machine finished the run first
FAST = ["--no-plots", "--sim-transport", "inprocess", "--progress", "plain"]


@pytest.mark.slow
def test_llm_run_totals_span_the_resume(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "agentbus.run", *FAST, "--tasks", "8", "--run-dir", str(run_dir)]
    first = subprocess.Popen(
        cmd, cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert first.stdout is not None
    deadline = time.monotonic() + 120
    for line in first.stdout:  # some episodes counted, then Ctrl-C
        if line.startswith("episodes ") and not line.startswith("episodes 0/"):
            break
        assert time.monotonic() < deadline
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=60)
    assert first.returncode == 130
    second = subprocess.run(
        # the rest at full speed: only the first process needed time to be interrupted
        [sys.executable, "-m", "agentbus.run", *FAST, "--resume", str(run_dir), "--sim-speed", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert second.returncode == 0, second.stderr[-2000:]
    results = orjson.loads((run_dir / "results.json").read_bytes())
    whole, this = results["llm"]["run"], results["llm"]["total"]
    assert whole["processes"] == 2
    assert (
        f"LLM calls over the whole run (2 processes): requested {whole['requested']}, "
        f"sent {whole['sent']}"
    ) in second.stdout
    assert whole["sent"] == results["cost"]["run"]["sent_calls"]  # the cost line's count
    assert whole["sent"] > this["sent"] and whole["requested"] > this["requested"]
    # agentbus.report rebuilds the same whole-run figures from the log alone
    subprocess.run(
        [sys.executable, "-m", "agentbus.report", str(run_dir), "--no-plots", "--quiet"],
        cwd=ROOT, check=True, timeout=120,
    )  # fmt: skip
    rebuilt = orjson.loads((run_dir / "results.json").read_bytes())
    assert rebuilt["llm"]["run"] == whole
    assert rebuilt["cost"]["run"]["by_slot"] == results["cost"]["run"]["by_slot"]
    # every completed call of both processes billed once (equal to an uninterrupted
    # run's bill, to the call, per slot and in dollars: tests/app/test_bill_resume_servers.py)
    lines = [line for line in (run_dir / "llm-cache.jsonl").read_bytes().splitlines() if line]
    assert results["cost"]["run"]["sent_calls"] == len(lines) == whole["sent"]
