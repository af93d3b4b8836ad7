"""``python -m agentbus.report RUN_DIR`` rebuilds results from the event log alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from rich.console import Console

from agentbus.app.report import main, rebuild
from attribution.plots import plot_radar
from attribution.synthetic import paper_like_game
from attribution.tables import render_console, to_markdown

SLOTS = ["planning", "reasoning", "action", "reflection"]


def _event(seq: int, data: dict[str, Any]) -> bytes:
    return orjson.dumps({"v": 1, "seq": seq, "ts": 1.0 + seq, "type": "episode.ended", **data})


def write_log(run_dir: Path, *, tasks: int = 25, torn: bool = True) -> None:
    rng = np.random.default_rng(4)
    lines = [orjson.dumps({"v": 1, "seq": 0, "ts": 0.0, "type": "run.started"})]
    seq = 1
    for model, bg in (("sim:strong", paper_like_game(4)), ("sim:action", paper_like_game(4))):
        for t in range(tasks):
            for m in range(16):
                data = {
                    "episode_id": f"{model}-{t}-{m}",
                    "task_id": f"task-{t}",
                    "test_model": model,
                    "default_model": "sim:weak",
                    "coalition": [s for k, s in enumerate(SLOTS) if m >> k & 1],
                    "slots": SLOTS,
                    "repeat": 0,
                    "outcome": {"reward": float(rng.random() < bg.v[m]), "success": True},
                }
                lines.append(_event(seq, data))
                seq += 1
    infra = {
        "episode_id": "broken",
        "task_id": "task-0",
        "test_model": "sim:strong",
        "default_model": "sim:weak",
        "coalition": [],
        "slots": SLOTS,
        "repeat": 0,
        "outcome": {"reward": 0.0, "success": False, "error_kind": "infra", "error": "down"},
    }
    lines.append(_event(seq, infra))
    body = b"\n".join(lines) + b"\n"
    if torn:
        body += _event(seq + 1, infra)[:37]  # kill -9 in the middle of a write
    (run_dir / "events.jsonl").write_bytes(body)


def test_report_rebuilds_results_json_markdown_and_plots(tmp_path: Path) -> None:
    write_log(tmp_path)
    assert main([str(tmp_path), "--quiet"]) == 0
    results = orjson.loads((tmp_path / "results.json").read_bytes())
    assert results["slots"] == SLOTS
    assert results["default_model"] == "sim:weak"
    strong = results["models"]["sim:strong"]
    assert strong["coalitions"][""]["n"] == 25
    assert set(strong["coalitions"]) >= {"", "planning", "planning+reasoning+action+reflection"}
    assert strong["failures"] == 1
    for index in ("shapley", "banzhaf"):
        for slot in SLOTS:
            row = strong[index][slot]
            assert row["ci_low"] <= row["value"] <= row["ci_high"]
    total = sum(strong["shapley"][s]["value"] for s in SLOTS)
    assert total == pytest.approx(strong["delta_acc"])
    assert strong["delta_acc"] == pytest.approx(strong["acc_test"] - strong["acc_default"])
    assert set(results["best"]["slots"]) == set(SLOTS)
    md = (tmp_path / "results.md").read_text()
    for word in (
        "| planning |",
        "| v(all test) |",
        "| v(all test) - v(all default) |",
        "sim:strong",
        "sim:action",
    ):
        assert word in md
    for name in ("shapley", "banzhaf", "coalitions", "radar"):
        for ext in ("png", "svg"):
            assert (tmp_path / "plots" / f"{name}.{ext}").stat().st_size > 1000


def test_partial_log_reports_not_estimable_instead_of_zero(tmp_path: Path) -> None:
    write_log(tmp_path, tasks=1, torn=False)
    lines = (tmp_path / "events.jsonl").read_bytes().splitlines()
    keep = [ln for ln in lines if b"planning+reasoning+action+reflection" not in ln]
    keep = [
        ln for ln in keep if b'"coalition":["planning","reasoning","action","reflection"]' not in ln
    ]
    (tmp_path / "events.jsonl").write_bytes(b"\n".join(keep) + b"\n")
    results = rebuild(tmp_path, plots=False)
    strong = results["models"]["sim:strong"]
    assert strong["shapley"] is None
    assert "not estimable" in strong["not_estimable"]
    assert strong["acc_test"] is None
    assert "n/a" in to_markdown(results)


def test_bad_run_dir_is_one_line_error_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentbus.report", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert proc.stderr.startswith("error:") and "does not exist" in proc.stderr
    assert main([str(tmp_path)]) == 2  # exists but holds no events.jsonl


def test_console_table_and_radar(tmp_path: Path) -> None:
    write_log(tmp_path, tasks=8, torn=False)
    results = rebuild(tmp_path, plots=False)
    console = Console(record=True, width=160)
    console.print(render_console(results))
    text = console.export_text()
    assert (
        "Shapley values" in text and "v(all test) - v(all default)" in text and "sim:action" in text
    )
    paths = plot_radar({"math": {"p": 0.1, "r": 0.2}, "git": {"p": 0.3, "r": 0.0}}, tmp_path)
    assert all(p.exists() for p in paths)


def test_compare_two_runs(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    write_log(a, tasks=12, torn=False)
    write_log(b, tasks=12, torn=False)
    assert main([str(a), "--compare", str(b), "--quiet"]) == 0
    comparison = orjson.loads((a / "comparison.json").read_bytes())
    assert comparison["consistency_rate"] == 1.0  # identical logs rank models identically
    assert comparison["pearson"] == pytest.approx(1.0)
    assert (a / "plots" / "radar_compare.png").exists()
