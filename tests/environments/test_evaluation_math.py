"""The whole evaluation, in process, against the simulator's HTTP server on loopback."""

from __future__ import annotations

import importlib.util
import io
import math
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.console import Console

from agentbus.app.config import build_config
from agentbus.app.evaluate import evaluate
from agentbus.app.report import rebuild
from agentbus.core import registry

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def config(tmp_path: Path, **kw: Any) -> Any:
    data: dict[str, Any] = {
        "env": "math",
        "tasks": 20,
        "progress": "off",
        "run_dir": str(tmp_path / "run"),
        "sim": {"speed": 0},
    }
    data.update(kw)
    return build_config(data)


async def test_strong_action_profile_is_recovered_as_the_mvp(tmp_path: Path) -> None:
    report = await evaluate(
        config(tmp_path, test=["sim:strong-action"]), Console(file=open("/dev/null", "w"))
    )
    model = report.results["models"]["sim:strong-action"]
    assert len(model["coalitions"]) == 16
    assert all(c["n"] == 20 for c in model["coalitions"].values())
    shap = model["shapley"]
    assert max(shap, key=lambda s: shap[s]["value"]) == "action"
    assert shap["action"]["ci_low"] > 0
    # efficiency: the Shapley values add up to v(all test) - v(all default)
    total = sum(v["value"] for v in shap.values())
    assert math.isclose(total, model["delta_acc"], abs_tol=1e-9)
    assert math.isclose(
        model["delta_acc"],
        model["coalitions"]["planning+reasoning+action+reflection"]["mean"]
        - model["coalitions"][""]["mean"],
        abs_tol=1e-12,
    )
    # results files as documented
    saved = orjson.loads((tmp_path / "run" / "results.json").read_bytes())
    assert set(saved["models"]["sim:strong-action"]["banzhaf"]) == {
        "planning",
        "reasoning",
        "action",
        "reflection",
    }
    assert (tmp_path / "run" / "results.md").read_text().count("action") >= 2
    # calls shared across coalitions
    llm = saved["llm"]
    assert 0 < llm["total"]["sent"] < llm["total"]["requested"]


async def test_two_slot_game_and_resume_skips_finished_work(tmp_path: Path) -> None:
    cfg = config(tmp_path, tasks=8, slots=["planning", "action"])
    first = await evaluate(cfg, Console(file=open("/dev/null", "w")))
    model = first.results["models"]["sim:strong"]
    assert set(model["coalitions"]) == {"", "planning", "action", "planning+action"}
    assert first.episodes_run == 32
    again = await evaluate(cfg, Console(file=open("/dev/null", "w")))
    assert again.episodes_run == 0 and again.episodes_skipped == 32
    assert again.results["models"]["sim:strong"]["shapley"] == model["shapley"]


async def test_capabench_algebra_dataset(tmp_path: Path) -> None:
    algebra = SHARED / "capabench" / "math" / "algebra.json"
    if not algebra.exists():
        import pytest

        pytest.skip("../shared/capabench is not available")
    cfg = config(
        tmp_path,
        dataset=str(algebra),
        knowledge=str(SHARED / "capabench" / "math" / "algebra_knowledge.json"),
        limit=4,
    )
    report = await evaluate(cfg, Console(file=open("/dev/null", "w")))
    assert report.results["models"]["sim:strong"]["episodes"] == 64


async def test_custom_module_from_the_example_fills_a_slot(tmp_path: Path) -> None:
    path = ROOT / "examples" / "custom_module" / "one_line_critic.py"
    spec = importlib.util.spec_from_file_location("one_line_critic", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["one_line_critic"] = module
    spec.loader.exec_module(module)
    registry.register("modules", "example.critic", module.OneLineCritic)
    try:
        cfg = config(tmp_path, tasks=6, modules={"reflection": "example.critic"})
        report = await evaluate(cfg, Console(file=open("/dev/null", "w")))
    finally:
        registry.unregister("modules", "example.critic")
    assert report.results["models"]["sim:strong"]["shapley"] is not None
    events = [
        orjson.loads(line) for line in (tmp_path / "run" / "events.jsonl").read_bytes().splitlines()
    ]
    ended = [e for e in events if e["type"] == "episode.ended"]
    assert all(e["outcome"].get("error_kind") in (None, "step_limit") for e in ended)
    reflections = [
        m
        for e in ended
        for m in e["outcome"].get("trace") or []
        if m["type"] == "Reflection" and m["sender"] == "reflection"
    ]
    assert reflections, "the custom reflection module never spoke"


async def test_adaptive_run_stops_by_itself_under_the_target(tmp_path: Path) -> None:
    # four task blocks in flight: the stop is not overrun by work issued before it. Two
    # slots (4 coalitions a task) keep it cheap; the 16-coalition adaptive stop is checked
    # against the offline rule in test_truth_coverage.
    cfg = config(
        tmp_path,
        tasks=300,
        slots=["reasoning", "action"],
        adaptive=True,
        target_halfwidth=0.25,
        tasks_in_flight=4,
    )
    report = await evaluate(cfg, Console(file=open("/dev/null", "w")))
    adaptive = report.results["adaptive"]
    assert adaptive["done"] is True, adaptive
    assert "narrower than" in adaptive["stop_reason"]
    model = report.results["models"]["sim:strong"]
    # it stopped well before running every coalition on every task
    assert model["episodes"] < 4 * 300
    # the stop rule: at least 20 tasks in, then every fixed-sample interval under the target
    ended = [
        orjson.loads(line)
        for line in (tmp_path / "run" / "events.jsonl").read_bytes().splitlines()
        if b'"episode.ended"' in line
    ]
    assert len({e["task_id"] for e in ended}) >= 20
    for slot in model["shapley"].values():
        assert slot["ci_high"] - slot["ci_low"] <= 2 * 0.25 + 1e-9
        # the anytime-valid interval is given beside it, and is wider
        assert slot["cs_high"] - slot["cs_low"] > slot["ci_high"] - slot["ci_low"]
        assert "fixed_low" not in slot
    assert report.results["interval"] == "fixed-sample"
    assert "Chow-Robbins" in (tmp_path / "run" / "results.md").read_text()
    # agentbus.report rebuilds the same intervals from the log alone
    rebuilt = rebuild(tmp_path / "run", plots=False)
    assert rebuilt["models"]["sim:strong"]["shapley"] == model["shapley"]
    assert "Chow-Robbins" in (tmp_path / "run" / "results.md").read_text()


async def test_adaptive_run_on_fewer_than_20_tasks_says_why_it_did_not_stop(
    tmp_path: Path,
) -> None:
    # every task in flight at once: the tasks can run out before the first estimate
    cfg = config(tmp_path, tasks=8, slots=["planning", "action"], adaptive=True, tasks_in_flight=8)
    report = await evaluate(cfg, Console(file=io.StringIO()))
    adaptive = report.results["adaptive"]
    assert adaptive["done"] is False
    assert "the stop needs 20 tasks or more" in adaptive["stop_reason"], adaptive
    assert report.results["models"]["sim:strong"]["episodes"] == 4 * 8  # every task used


async def test_two_test_models_and_the_best_combination(tmp_path: Path) -> None:
    cfg = config(tmp_path, tasks=6, test=["sim:strong-reasoning", "sim:strong-action"], best=True)
    report = await evaluate(cfg, Console(file=open("/dev/null", "w")))
    models = report.results["models"]
    assert set(models) == {"sim:strong-reasoning", "sim:strong-action"}
    best = report.results["best_run"]
    assert best["n"] == 6
    # each varied slot goes to the model with the largest positive phi, else the default
    for slot, model in best["assignment"].items():
        values = {m: models[m]["shapley"][slot]["value"] for m in models}
        top = max(values, key=lambda m: values[m])
        assert model == (top if values[top] > 0 else "sim:weak")
    assert "Whole agents" in (tmp_path / "run" / "results.md").read_text()


async def test_a_plot_that_cannot_be_drawn_is_one_line_not_the_end_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    import attribution.plots

    def refuse(*_: Any) -> list[Path]:
        raise ValueError("'xerr' must not contain negative values")

    monkeypatch.setattr(attribution.plots, "write_plots", refuse)
    out = io.StringIO()
    cfg = config(tmp_path, tasks=2, slots=["planning", "action"])
    report = await evaluate(cfg, Console(file=out, width=200))
    assert report.results["models"]["sim:strong"]["episodes"] == 8
    assert (tmp_path / "run" / "results.json").exists()
    assert "plots not written (ValueError: 'xerr' must not contain negative values)" in (
        out.getvalue()
    )
