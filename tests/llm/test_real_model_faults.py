"""Whole runs against a server that behaves like a real one (issue 34's done-check).

``python -m agentbus.run`` in a subprocess, its simulator configured with the
behaviours of real servers and small models (agentbus/sim/behaviours.py):

* a context window answered with llama.cpp's 400: every overflowing episode
  is a failure of the task, counted in v(S); no infrastructure errors, no
  unresolved cells, the table complete;
* function calls handed back as text (a server without a tool-call parser):
  read from the text, so the run's table is the same as with native calls;
* answers cut at max tokens, runs-on into the environment's lines, copied
  templates: counted per slot in results.json, the run still complete.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(tmp: Path, name: str, faults: str, *args: str) -> dict[str, Any]:
    """One run with ``faults`` as its ``[sim.faults]`` table; its results.json."""
    config = tmp / f"{name}.toml"
    config.write_text(f"[sim.faults]\n{faults}\n")
    run_dir = tmp / name
    result = subprocess.run(
        [sys.executable, "-m", "agentbus.run", "--config", str(config), "--limit", "2",
         "--sim-speed", "0", "--run-dir", str(run_dir), "--no-plots", "--progress", "off", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "0 infrastructure errors" in result.stdout, result.stdout[-2000:]
    results: dict[str, Any] = orjson.loads((run_dir / "results.json").read_bytes())
    results["_stdout"] = result.stdout
    results["_events"] = [
        orjson.loads(line)
        for line in (run_dir / "events.jsonl").read_bytes().splitlines()
        if b'"type":"episode.ended"' in line
    ]
    return results


def table(results: dict[str, Any]) -> dict[str, dict[str, tuple[int, float]]]:
    return {
        model: {k: (v["n"], v["mean"]) for k, v in summary["coalitions"].items()}
        for model, summary in results["models"].items()
    }


def assert_complete(results: dict[str, Any], cells_per_coalition: int) -> None:
    failures = results["failures"]
    assert failures["attempts"] == 0 and failures["unresolved_cells"] == 0, failures
    for coalitions in table(results).values():
        assert len(coalitions) == 2 ** len(results["slots"])
        assert {n for n, _ in coalitions.values()} == {cells_per_coalition}


@pytest.mark.slow
def test_llama_cpp_context_overflow_is_a_task_failure_and_the_table_is_complete(
    tmp_path: Path,
) -> None:
    faults = 'context_window = 1400\ncontext_style = "llama-cpp-python"'
    results = run(tmp_path, "overflow", faults)
    assert_complete(results, cells_per_coalition=2)
    overflowed = [
        e for e in results["_events"] if e["outcome"].get("error_kind") == "context_overflow"
    ]
    assert overflowed, "the window was meant to be too small for some episodes"
    assert all(e["counts"] and e["outcome"]["reward"] == 0.0 for e in overflowed)
    assert "maximum context length is 1400 tokens" in overflowed[0]["outcome"]["reason"]
    assert results["answers"]["totals"]["context_overflows"] == len(overflowed)
    assert "context overflows" in results["_stdout"]


@pytest.mark.slow
def test_tool_calls_as_text_give_the_same_table_as_native_calls(tmp_path: Path) -> None:
    mirror = ("--agent", "mirror", "--env", "tools", "--limit", "1")
    native = run(tmp_path, "native", "", *mirror)
    text = run(tmp_path, "text", "rate_tool_text = 1.0", *mirror)
    assert native["answers"]["totals"]["finish_reasons"].get("tool_calls", 0) > 0
    assert "tool_calls" not in text["answers"]["totals"]["finish_reasons"]  # all came as text
    assert table(text) == table(native)


def test_cut_off_run_on_and_copied_answers_are_counted_per_slot(tmp_path: Path) -> None:
    faults = "rate_truncate = 0.15\nrate_run_on = 0.3\nrate_copy_example = 0.15"
    results = run(tmp_path, "behaviours", faults)
    assert_complete(results, cells_per_coalition=2)
    totals = results["answers"]["totals"]
    assert totals["cut_off"] > 0 and totals["unparsable"] > 0
    action = results["answers"]["by_slot"]["action"]
    assert sum(row["unparsable"] for row in action.values()) > 0
    # the run-on answers were cut at the stop sequence: nobody wrote the environment's lines
    assert "model answers:" in results["_stdout"]
