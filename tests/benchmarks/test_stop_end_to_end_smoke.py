"""benchmarks/stop_end_to_end.py still runs, and judges a run against the truth correctly.

Not a measurement: one real 3-task ticket run through the script (too few
tasks for any rule, so it must end "not identified" with every pair run),
then the script's judge on that run's own results.json, once as it is and
once marked as stopped, against the true MVP and against a wrong one.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "stop_end_to_end.py"

pytestmark = pytest.mark.slow  # about 5 s of CPU: imports in a worker, 48 episodes


def _script() -> ModuleType:
    """The benchmark script as a module, loaded from its path (no sys.path change)."""
    spec = importlib.util.spec_from_file_location("stop_end_to_end", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_short_run_is_recorded_and_judged(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT),
         "--envs", "ticket", "--rules", "mvp", "--runs", "1", "--tasks", "3",
         "--jobs", "1", "--keep", "--out", str(out), "--root", str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    (rec,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert rec["rc"] == 0 and rec["cpu_s"] > 0
    assert rec["episodes"] == 48 and not rec["stopped"] and rec["named"] is None
    assert rec["pairs_left"] == 0 and "the tasks ran out" in rec["stop_reason"]
    assert rec["headline_mvp"] is None and rec["headline_agrees"]
    assert set(rec["shown_covers"]) == {"planning", "reasoning", "action", "reflection"}
    assert "| ticket | mvp | 3 | 1 | 0/1 = 0.000 [0.000, 0.793] |" in proc.stdout

    # the same run's results, as a stop would have left them
    bench = _script()
    run_dir = tmp_path / "runs" / f"ticket-mvp-{rec['seed']}"
    results = json.loads((run_dir / "results.json").read_text())
    results["adaptive"]["done"] = True
    shap = results["models"]["sim:strong"]["shapley"]
    top = max(shap, key=lambda s: shap[s]["value"])
    true = bench.truth("ticket")
    said = bench.judge(results, f"**MVP: {top} +0.20 [0.10, 0.30] > ...**", "mvp", true)
    assert said["stopped"] and said["named"] == top and said["headline_agrees"]
    assert said["mvp_right"] == (top == true["mvp"])
    wrong = {**true, "mvp": next(s for s in shap if s != top)}
    assert bench.judge(results, "", "mvp", wrong)["mvp_right"] is False
    # a stop whose headline says "not identified" does not agree with it
    silent = bench.judge(results, f"**MVP not identified: {top} +0.20**", "mvp", true)
    assert silent["headline_mvp"] is None and not silent["headline_agrees"]
    # an interval that misses the truth is counted as missing
    far = {**true, "phi": {s: 5.0 for s in true["phi"]}}
    assert not any(bench.judge(results, "", "mvp", far)["shown_covers"].values())
