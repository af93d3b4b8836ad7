"""The core-runtime benchmarks still run: each script once, tiny sizes, in a subprocess.

Not a measurement (the figures of a tiny run mean nothing); it keeps the
scripts from rotting as the code they drive changes, and checks the few
facts a tiny run can show: every episode finished without an error, and no
agentbus actor outlives its episode.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.helpers.cli_run import python, succeeded

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


def run(script: str, *args: str, timeout: float = 120.0) -> str:
    return succeeded(python(str(BENCH / script), *args, timeout=timeout, cwd=ROOT))


def result_line(out: str, tag: str) -> object:
    for line in out.splitlines():
        if line.startswith(tag):
            return json.loads(line[len(tag) :])
    raise AssertionError(f"no {tag!r} line in:\n{out}")


def test_scale_runs_praf_math_episodes_and_reports_lag() -> None:
    out = run("scale.py", "--episodes", "48", "--speed", "0", "--loop", "asyncio", "--json")
    result = result_line(out, "SCALE-RESULT ")
    assert isinstance(result, dict)
    assert result["episodes"] == 48 and result["errors"] == 0
    assert result["beats"] > 0 and result["lag_p99_ms"] >= 0
    # no wall-clock episode timeout unless asked: a starved machine must not fail healthy ones
    assert result["timeout_s"] is None and 0 < result["episode_wall_p50_s"] <= result["wall_s"]
    assert out.strip().splitlines()[-1].startswith("ratio on-CPU lag p99 / target")


@pytest.mark.skipif(
    importlib.util.find_spec("pyinstrument") is None, reason="pyinstrument not installed"
)
def test_profile_overhead_splits_the_time() -> None:
    out = run("profile_overhead.py", "--episodes", "32", "--speed", "0")
    assert "agentbus core" in out and "top 10 hot spots" in out
    assert out.strip().splitlines()[-1].startswith("ratio framework / simulator time")


def test_vs_autogen_agentbus_side_keeps_nothing_alive() -> None:
    out = run("vs_autogen.py", "--child", "agentbus", "--sizes", "20,60", "--repeats", "1")
    rows = result_line(out, "VS-AUTOGEN-RESULT ")
    assert isinstance(rows, list) and [r["episodes"] for r in rows] == [20, 60]
    assert all(r["live_agents"] == 0 and r["msgs_per_s"] > 0 for r in rows)


@pytest.mark.skipif(
    importlib.util.find_spec("autogen_core") is None, reason="autogen-core not installed"
)
def test_vs_autogen_compares_both_frameworks() -> None:
    out = run("vs_autogen.py", "--sizes", "20,40", "--repeats", "1")
    assert "autogen-core" in out
    assert out.strip().splitlines()[-1].startswith("ratio msgs/s")


def test_stopping_rules_replays_adaptive_runs_from_real_outcomes() -> None:
    out = run(
        "stopping_rules.py",
        "--env",
        "git",
        "--seeds",
        "2",
        "--workers",
        "1",
        "--draws",
        "200",
        timeout=240.0,
    )
    names = {
        "fixed@min",
        "skewed@min",
        "used@min",
        "fixed@pool",
        "chow-robbins",
        "chow-robbins/used",
        "anytime",
        "anytime/fixed",
    }
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] in names:
            rows[parts[0]] = [float(p) for p in parts[1:]]
    assert set(rows) == names
    # same stop, wider interval: the anytime-valid one covers at least as often
    assert rows["anytime"][0] >= rows["anytime/fixed"][0]
    # the interval runs print is the plain t one, widened where skewed: it covers at least as often
    assert rows["used@min"][0] >= rows["fixed@min"][0]
    # nothing stops before --min-tasks (20) or after the block's 30 tasks
    assert all(20 <= r[3] <= 30 for r in rows.values())
    assert out.strip().splitlines()[-1].startswith("coverage next to fixed@min")
