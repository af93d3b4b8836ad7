"""Smoke test of the LLM benchmarks: each script runs end to end with tiny sizes.

The figures are meaningless at these sizes (speed 0: no serving delays; no
plots: their directories are temporary, and the shared_calls smoke's CPU fell
from 11.1 to 8.5 s without them); what is checked is that every script runs,
prints its ratio line last, and, for the comparison with the sequential
design, that both arms agree on every episode's success at temperature 0.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli_run import python, succeeded

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


def run_script(name: str, *args: str, timeout: float = 120) -> list[str]:
    proc = python(str(BENCH / name), *args, timeout=timeout, cwd=ROOT)
    lines = [line for line in succeeded(proc).splitlines() if line.strip()]
    assert lines, proc.stderr[-3000:]
    return lines


def test_saturation_runs_and_reports_the_throughput_ratio() -> None:
    lines = run_script("saturation.py", "--tasks", "1", "--speed", "0", "--no-plots")
    assert lines[-1].startswith("ratio request throughput agentbus/raw:")
    assert any("raw: AsyncOpenAI replays" in line for line in lines)


def test_vs_sequential_arms_agree_on_every_episode() -> None:
    lines = run_script(
        "vs_sequential.py",
        *("--tasks", "1", "--seq-tasks", "1", "--speed", "0", "--coalitions", "2", "--no-plots"),
    )
    assert lines[-1].startswith("ratio wall-clock sequential/agentbus")
    assert "success per (coalition, task): identical" in lines


def test_shared_calls_reports_sent_over_requested() -> None:
    lines = run_script("shared_calls.py", "--tasks", "1", "--no-plots")
    assert lines[-1].startswith("ratio LLM calls sent/requested at temperature 0:")
    ratio = float(lines[-1].split(":")[1].split()[0])
    assert 0 < ratio < 1
