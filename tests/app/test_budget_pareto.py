"""Budgets and the Pareto front, run the way a user runs them (CLI subprocesses).

* ``--budget-usd``: the run stops when the next episode would not fit; what
  it billed beyond the budget is at most one episode's cost (the last ones
  run alone, projected at their mean); resuming with the same budget stays
  under the same bound, with a larger one it finishes the grid, and no cell
  runs twice.
* ``--pareto``: the front is chosen on a third of the tasks and its points
  are estimated on the rest; every other assignment measured by the
  coalition runs equals the coalition table exactly; the assignments run for
  real agree with their prediction (the paired difference interval holds 0)
  on the simulator.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAST = ("--sim-speed", "0", "--sim-transport", "inprocess", "--progress", "off", "--no-preflight")

pytestmark = pytest.mark.slow


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "agentbus.run", *FAST, "--no-trace", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def _events(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def _ended(run_dir: Path) -> list[dict[str, Any]]:
    return [e for e in _events(run_dir) if e["type"] == "episode.ended"]


def _billed(event: dict[str, Any]) -> float:
    return sum(u.get("sent_usd") or 0.0 for u in event["outcome"].get("usage", {}).values())


def test_budget_stops_within_in_flight_and_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    budget = 0.25
    grid = ("--tasks", "4", "--concurrency", "4", "--run-dir", str(run_dir))
    proc = _run(*grid, "--budget-usd", str(budget))
    results = json.loads((run_dir / "results.json").read_text())
    stop = results["cost"]["budget"]["stopped_at"]
    assert stop is not None, proc.stdout[-2000:]
    assert "budget: stopped" in proc.stdout and "$0.25" in proc.stdout
    assert "--resume" in proc.stdout
    ended = _ended(run_dir)
    assert len(ended) < 4 * 16  # it stopped before the grid was done
    # only the episodes in flight when the gate closed ended afterwards
    assert len(ended) == stop["episodes"] + stop["in_flight"]
    assert stop["in_flight"] <= 4
    total = sum(_billed(e) for e in ended)
    assert total == pytest.approx(results["cost"]["run"]["billed_usd"])
    # beyond the budget by one episode's cost at most
    assert total - budget <= max(_billed(e) for e in ended) + 1e-12

    # the same budget again: only what still fits (a new process projects the work
    # it opens afresh), under the same bound
    last_seq = max(e["seq"] for e in _events(run_dir))
    _run("--resume", str(run_dir), *FAST, "--budget-usd", str(budget))
    again = json.loads((run_dir / "results.json").read_text())["cost"]["budget"]["stopped_at"]
    assert again is not None
    resumed = [e for e in _events(run_dir) if e["seq"] > last_seq]
    started = [e["seq"] for e in resumed if e["type"] == "episode.started"]
    if total >= budget:  # the first part's in-flight work already passed it: start nothing
        assert started == [] and again["billed_usd"] == pytest.approx(total)
    if started:  # beyond the budget by one episode's cost at most
        final = sum(_billed(e) for e in _ended(run_dir))
        assert final - budget <= max(_billed(e) for e in _ended(run_dir)) + 1e-12
    assert len(_ended(run_dir)) == again["episodes"] + again["in_flight"] < 4 * 16
    # a larger budget finishes the grid; every cell ran exactly once
    proc = _run("--resume", str(run_dir), *FAST, "--budget-usd", "1000")
    ended = _ended(run_dir)
    cells = Counter(e["episode_id"] for e in ended if e["counts"])
    assert len(cells) == 4 * 16 and set(cells.values()) == {1}
    results = json.loads((run_dir / "results.json").read_text())
    assert results["cost"]["budget"]["stopped"] is None
    assert results["models"]["sim:strong"]["shapley"] is not None


def test_pareto_predicted_vs_measured(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = _run(
        "--tasks", "8", "--test", "sim:strong,sim:strong-action", "--pareto", "2",
        "--run-dir", str(run_dir),
    )  # fmt: skip
    out = proc.stdout
    assert "Accuracy-cost Pareto front" in out and "Predicted vs measured" in out
    assert "cheapest assignment whose accuracy interval overlaps the best one's" in out
    results = json.loads((run_dir / "results.json").read_text())
    pareto = results["pareto"]
    assert pareto["assignments"] == 3**4 == len(pareto["points"])
    assert (run_dir / "plots" / "pareto.png").is_file()
    # an assignment with one test model is a coalition: its figure is the coalition's
    # (over all tasks, unless the front chose it: then over the held-out tasks)
    split = pareto["selection"]
    assert split == {"tasks": 3, "held_out": 5}
    strong = results["models"]["sim:strong"]["coalitions"]
    cost_rows = results["cost"]["models"]["sim:strong"]["coalitions"]
    checked = 0
    for p in pareto["points"]:
        chosen = p["on_front"] or p["most_accurate"]
        assert p["estimated_on"] == ("held-out" if chosen else "all"), p
        if chosen:
            assert p["acc"]["n"] == split["held_out"], p
            continue
        if set(p["assignment"].values()) <= {"sim:weak", "sim:strong"}:
            key = "+".join(s for s, m in p["assignment"].items() if m == "sim:strong")
            assert p["acc"]["mean"] == pytest.approx(strong[key]["mean"])
            assert p["cost_usd"]["mean"] == pytest.approx(cost_rows[key]["mean"])
            checked += 1
    assert checked >= 8
    assert sum(p["most_accurate"] for p in pareto["points"]) == 1
    # the front is non-dominated by the figures that chose it (the selection tasks)
    sel = {
        p["label"]: (p["selection"]["acc"], p["selection"]["cost_usd"]) for p in pareto["points"]
    }
    for p in (q for q in pareto["points"] if q["on_front"]):
        a, c = sel[p["label"]]
        for other, (qa, qc) in sel.items():
            assert not (qa >= a and qc <= c and (qa > a or qc < c)), (p["label"], other)
    # the chosen assignments were run on every task and agree with their prediction
    assert len(pareto["chosen"]) == 2
    for p in pareto["chosen"]:
        run = p["run"]
        assert run["tasks"] == 8
        assert run["acc_vs_predicted"]["agrees"], p
        assert run["cost_vs_predicted"]["agrees"], p
        assert run["acc_vs_predicted"]["within"], p
    kinds = Counter(e.get("kind", "coalition") for e in _ended(run_dir))
    assert kinds["pareto"] == 2 * 8
    assert pareto["cheapest_overlapping"] in sel
