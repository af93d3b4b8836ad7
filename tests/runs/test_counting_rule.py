"""Every reader of a run counts exactly what the log holds, under injected faults.

A real ``python -m agentbus.run`` with 4% of simulator calls failing and no
LLM-level retries: many episodes fail on the infrastructure and succeed on a
later attempt of the same cell. The test recounts the log by hand (each cell
once, its latest counting attempt; infrastructure failures never) and checks
that results.json, ``python -m agentbus.report`` and a ``--resume`` of the
finished run all give exactly those per-coalition counts and means.
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentbus.core.record import EpisodeRecord

FAULTS = """
attempts = 10

[llm.limits]
max_retries = 0

[sim.faults]
rate_500 = 0.04
seed = 7
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def events(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "events.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines if line.strip()]


def hand_count(run_dir: Path) -> dict[str, dict[str, tuple[int, float]]]:
    """model -> coalition key -> (n, mean), recounted from the raw log lines."""
    latest: dict[str, dict[str, Any]] = {}
    for e in events(run_dir):
        if e["type"] != "episode.ended" or e.get("kind", "coalition") != "coalition":
            continue
        if e["outcome"].get("error_kind") not in (None, "step_limit"):
            continue  # infrastructure failures never count
        old = latest.get(e["episode_id"])
        if old is None or e.get("attempt", 1) >= old.get("attempt", 1):
            latest[e["episode_id"]] = e
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for e in latest.values():
        key = "+".join(s for s in e["slots"] if s in e["coalition"])
        sums[e["test_model"]][key].append(float(e["outcome"]["reward"]))
    return {
        m: {k: (len(v), round(sum(v) / len(v), 12)) for k, v in rows.items()}
        for m, rows in sums.items()
    }


def table(run_dir: Path) -> dict[str, dict[str, tuple[int, float]]]:
    results = orjson.loads((run_dir / "results.json").read_bytes())
    return {
        m: {k: (v["n"], round(v["mean"], 12)) for k, v in s["coalitions"].items()}
        for m, s in results["models"].items()
    }


@pytest.mark.slow
def test_results_report_and_resume_count_exactly_the_log(tmp_path: Path) -> None:
    config = tmp_path / "faults.toml"
    config.write_text(FAULTS)
    run_dir = tmp_path / "run"
    run(
        "agentbus.run",
        "--limit",
        "6",
        "--sim-speed",
        "0",
        "--config",
        str(config),
        "--run-dir",
        str(run_dir),
        "--progress",
        "off",
    )
    records = [EpisodeRecord.parse(e) for e in events(run_dir) if e["type"] == "episode.ended"]
    assert all(r is not None for r in records)
    failed = [r for r in records if r is not None and not r.counts]
    retried_ok = [r for r in records if r is not None and r.counts and r.attempt > 1]
    assert failed, "the injected faults should have failed some episodes"
    assert retried_ok, "some cell should have counted on a later attempt"

    expected = hand_count(run_dir)
    assert sum(n for rows in expected.values() for n, _ in rows.values()) == 6 * 16
    assert table(run_dir) == expected
    results = orjson.loads((run_dir / "results.json").read_bytes())
    assert results["failures"]["attempts"] == len(failed)
    assert results["failures"]["by_kind"] == {"infra": len(failed)}

    (run_dir / "results.json").unlink()
    run("agentbus.report", str(run_dir), "--no-plots", "--quiet")
    assert table(run_dir) == expected

    out = run("agentbus.run", "--resume", str(run_dir), "--progress", "off").stdout
    assert "0 run, 96 resumed from the log" in out
    assert table(run_dir) == expected
