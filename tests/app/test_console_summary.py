"""The console leads with the answer (issue 32 item 6), read through the CLI as a user sees it.

A small default run through ``python -m agentbus.run`` (4 tasks, simulator at
full speed): its first result line after the progress names the MVP with the
ranking and intervals; one compact table follows; cost tables come only with
``--details``; at 80 columns no two coalition rows read the same; simulated
dollars are said to be simulated list prices. Label helpers are checked on
the cases that broke before (two long vllm: specs cut to the same header).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentbus.app.summary import coalition_code, cost_line, slot_letters
from agentbus.llm.labels import model_labels
from attribution.headline import headline

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--tasks", "4", "--no-plots", "--progress", "plain", "--sim-speed", "0"]
FAST += ["--sim-transport", "inprocess"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    run_dir = tmp_path_factory.mktemp("console") / "run"
    done = _cli("agentbus.run", *FAST, "--run-dir", str(run_dir))
    assert done.returncode == 0, done.stderr[-2000:]
    return run_dir, done.stdout


@pytest.mark.slow
def test_first_result_line_names_the_mvp(run: tuple[Path, str]) -> None:
    run_dir, out = run
    lines = out.splitlines()
    last_progress = max(i for i, line in enumerate(lines) if line.startswith("episodes "))
    first = lines[last_progress + 1]
    results = orjson.loads((run_dir / "results.json").read_bytes())
    shap = results["models"]["sim:strong"]["shapley"]
    top = max(shap, key=lambda s: shap[s]["value"])
    # a 4-task run may not identify the top slot yet ("MVP not identified"); the ranking
    # leads anyway
    ranked = f"{top} {shap[top]['value']:+.2f} ["
    assert first.startswith((f"MVP: {ranked}", f"MVP not identified: {ranked}")), first
    for slot in results["slots"]:  # every slot ranked, in the line that wraps at 80 columns
        assert f"{slot} " in " ".join(lines[last_progress + 1 : last_progress + 4])


@pytest.mark.slow
def test_default_output_is_compact_and_cost_is_behind_details(run: tuple[Path, str]) -> None:
    run_dir, out = run
    assert "Shapley value per slot" in out
    assert "Banzhaf value" not in out and "Cost per slot" not in out
    assert "--details" in out
    assert "simulated list prices (nothing billed)" in out
    assert "billed $" not in out
    table = [
        line
        for line in out.splitlines()
        if not line.startswith(("episodes ", "run directory", "LLM calls"))
    ]
    assert max(len(line) for line in table) <= 80  # (progress lines and a long path may be wider)
    details = _cli("agentbus.report", str(run_dir), "--no-plots", "--details").stdout
    assert details.splitlines()[0].startswith(("MVP: ", "MVP not identified: "))
    for title in ("Banzhaf", "per coalition", "Cost per slot", "Shapley value of cost"):
        assert title in details, title
    assert max(len(line) for line in details.splitlines()) <= 80
    rows = [line for line in details.splitlines() if re.match(r"^│ [A-Z.]{4} ", line)]
    codes = [row.split("│")[1].strip() for row in rows]
    assert len(codes) == 2 * 16 and len(set(codes)) == 16  # value table and cost table
    assert "coalition code: P=planning, R=reasoning, A=action, E=reflection" in details
    markdown = (run_dir / "results.md").read_text()
    assert "Banzhaf" in markdown and "cost" in markdown.lower()


def test_model_labels_are_short_and_distinct() -> None:
    a = "vllm:http://127.0.0.1:8101/v1#meta-llama/Llama-3.1-8B-Instruct"
    b = "vllm:http://127.0.0.1:8102/v1#meta-llama/Llama-3.1-8B-Instruct"
    c = "vllm:http://127.0.0.1:8103/v1#Qwen/Qwen2.5-Coder-0.5B-Instruct"
    labels = model_labels([a, b, c, "sim:strong"])
    assert len(set(labels.values())) == 4
    assert labels["sim:strong"] == "sim:strong"
    assert "8101" in labels[a] and "8102" in labels[b]
    assert labels[c].startswith("Qwen2.5-Coder")
    # a naive 30-character cut makes two identical headers: the thing this replaces
    assert a[:25] == b[:25]


def test_coalition_codes_are_distinct_fixed_width() -> None:
    slots = ["planning", "reasoning", "action", "reflection", "reply", "rank"]
    letters = slot_letters(slots)
    assert len(set(letters.values())) == len(slots)
    keys = ["", "planning", "reasoning+reflection", "reply+rank", "reasoning+reply"]
    codes = [coalition_code(k, slots, letters) for k in keys]
    assert len(set(codes)) == len(codes) and {len(c) for c in codes} == {len(slots)}


def test_headline_says_which_intervals_hold_zero() -> None:
    def row(v: float, lo: float, hi: float, rl: int, rh: int) -> dict[str, float]:
        return {"value": v, "ci_low": lo, "ci_high": hi, "rank_low": rl, "rank_high": rh}

    results: dict[str, Any] = {
        "slots": ["planning", "action"],
        "models": {
            "sim:strong": {
                "shapley": {
                    "planning": row(0.02, -0.05, 0.09, 2, 2),
                    "action": row(0.3, 0.2, 0.4, 1, 1),
                }
            }
        },
    }
    (line,) = headline(results)
    expected = "MVP: action +0.30 [0.20, 0.40] > planning +0.02 [-0.05, 0.09]"
    assert line == expected + "; planning's interval holds 0"
    results["models"]["sim:strong"] = {"shapley": {}, "not_estimable": "no complete task block"}
    assert headline(results) == [
        "MVP not identified: phi is not estimable (no complete task block)"
    ]


def test_unpriced_models_get_no_dollar_figure() -> None:
    run = {"billed_usd": 0.0, "sent_calls": 38, "sent_tokens": 9100, "agent_usd": 0.0}
    unpriced = {"per_million_tokens_usd": {"vllm:http://h:1/v1#m": {"priced": False}}}
    results: dict[str, Any] = {"cost": {"run": run, "prices": unpriced, "unpriced": ["m"]}}
    line = cost_line(results)
    assert line is not None and "$" not in line and "38 calls sent" in line
    results["cost"]["prices"] = {"per_million_tokens_usd": {"openai:gpt-4o": {"priced": True}}}
    assert "billed" in (cost_line(results) or "")
    results["cost"]["prices"] = {"per_million_tokens_usd": {"sim:weak": {"priced": True}}}
    simulated = cost_line(results) or ""
    assert "simulated list prices (nothing billed)" in simulated and "$0 billed" not in simulated


def test_no_mvp_is_named_while_every_interval_holds_zero() -> None:
    row = {"value": 0.0, "ci_low": -1.9, "ci_high": 1.9, "rank_low": 1, "rank_high": 2}
    results: dict[str, Any] = {
        "slots": ["planning", "action"],
        "models": {"sim:strong": {"shapley": {"planning": dict(row), "action": dict(row)}}},
    }
    (line,) = headline(results)
    assert line.startswith("MVP not identified: ") and "every interval holds 0" in line
