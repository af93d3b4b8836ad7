"""Numbers a user sees are right when shown: live snapshots, resume config, repeats.

* Live snapshots of a default run come only from complete task blocks
  admitted in order: the first appears early (before a quarter of the
  episodes), says "not estimable yet" with a reason before that, and no
  snapshot's interval is disjoint from the final one.
* The manifest round-trips every config value (None included), so
  ``--resume DIR`` rebuilds exactly the run's config.
* Identical repeats (temperature 0, cache on) are refused with one line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentbus.app.cli_args import parse
from agentbus.app.config import RESULT_KEYS, RunConfig
from agentbus.runs.store import RunStore


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "agentbus.run", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def snapshots(run_dir: Path) -> list[tuple[int, dict[str, Any]]]:
    """(episodes ended so far, snapshot) for every snapshot in the log."""
    ended, out = 0, []
    for line in (run_dir / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event["type"] == "episode.ended":
            ended += 1
        elif event["type"] == "attribution.snapshot":
            out.append((ended, event))
    return out


@pytest.mark.slow
def test_default_run_snapshots_are_honest_from_the_first(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cli("--sim-speed", "0", "--progress", "off", "--run-dir", str(run_dir))
    snaps = snapshots(run_dir)
    total = 30 * 16
    final = snaps[-1][1]
    assert final["estimable"] and final["admitted_tasks"] == 30
    assert final["episodes"] == final["episodes_ended"] == total
    first = next(n for n, s in snaps if s["estimable"])
    assert first < total / 4, f"first estimate only after {first} of {total} episodes"
    for n, snap in snaps:
        if not snap["estimable"]:
            assert snap["reason"] and "not estimable" not in snap["reason"].lower()[:0]
            for summary in snap["models"].values():
                assert summary["shapley"] is None
            continue
        # every estimate covers whole task blocks only
        assert snap["episodes"] == 16 * snap["admitted_tasks"]
        for model, summary in snap["models"].items():
            last = final["models"][model]["shapley"]
            for slot, row in summary["shapley"].items():
                f = last[slot]
                assert row["ci_high"] >= f["ci_low"] and row["ci_low"] <= f["ci_high"], (
                    f"snapshot after {n} episodes: {slot} {row} is disjoint from final {f}"
                )


def test_manifest_round_trips_every_config_value(tmp_path: Path) -> None:
    config = RunConfig.model_validate(
        {
            "env": "math",
            "tasks": 7,
            "limit": 5,
            "seed": 3,
            "default": "sim:weak",
            "test": ["sim:strong", "sim:strong-action"],
            "slots": ["planning", "action"],
            "repeats": 1,
            "max_steps": 4,
            "concurrency": 12,
            "tasks_in_flight": 3,
            "attempts": 5,
            "best": True,
            "trace": False,
            "llm": {
                "sampling": {"temperature": 0.0, "max_tokens": 333, "seed": None},
                "limits": {"max_concurrency": 9, "rpm": 600.0, "tpm": None},
                "cache": "on",
            },
            "sim": {"speed": 0.0, "prefill_tokens_per_s": 9000.0, "block_tokens": 32},
        }
    )
    run_dir = tmp_path / "run"
    store = RunStore.open(run_dir, config.model_dump(mode="json"), result_keys=RESULT_KEYS)
    store.close()
    resumed = parse(["--resume", str(run_dir)])
    assert resumed.model_dump() == config.model_copy(update={"run_dir": run_dir}).model_dump()


def test_manifest_still_drops_secrets(tmp_path: Path) -> None:
    config = RunConfig(token="s3cret-token", serve="127.0.0.1:0")
    run_dir = tmp_path / "run"
    RunStore.open(run_dir, config.model_dump(mode="json")).close()
    text = (run_dir / "manifest.json").read_text()
    assert "s3cret-token" not in text
    assert '"max_tokens": 512' in text  # a setting that merely mentions tokens stays


def test_identical_repeats_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = cli(
        "--repeats",
        "3",
        "--tasks",
        "2",
        "--run-dir",
        str(run_dir),
        "--progress",
        "off",
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--repeats 3" in lines[0] and "temperature" in lines[0]
    assert not run_dir.exists()


@pytest.mark.slow
def test_repeats_at_temperature_above_zero_run_with_the_task_as_unit(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cli(
        "--repeats",
        "2",
        "--temperature",
        "0.7",
        "--tasks",
        "3",
        "--slots",
        "planning,action",
        "--sim-speed",
        "0",
        "--run-dir",
        str(run_dir),
        "--progress",
        "off",
    )
    results = orjson.loads((run_dir / "results.json").read_bytes())
    summary = results["models"]["sim:strong"]
    assert all(row["n"] == 6 for row in summary["coalitions"].values())
    assert summary["se_method"] == "paired"


def test_adaptive_runs_keep_few_task_blocks_in_flight() -> None:
    """A fixed run keeps ~256 episodes in flight; an adaptive one at most a few
    blocks, so its stop is not overrun by work issued before any estimate."""
    from agentbus.app.preparation import load_environment, make_plan
    from agentbus.app.schedule import ADAPTIVE_TASKS_IN_FLIGHT, tasks_in_flight

    for slots, fixed in (("planning,action", 64), ("planning,reasoning,action,reflection", 16)):
        config = parse(["--slots", slots, "--tasks", "4"])
        plan = make_plan(config, load_environment(config).tasks)
        assert tasks_in_flight(config, plan) == fixed
        adaptive = parse(["--slots", slots, "--tasks", "4", "--adaptive"])
        window = tasks_in_flight(adaptive, make_plan(adaptive, load_environment(adaptive).tasks))
        assert window == min(fixed, ADAPTIVE_TASKS_IN_FLIGHT)
        chosen = parse(["--slots", slots, "--tasks", "4", "--adaptive"])
        chosen = chosen.model_copy(update={"tasks_in_flight": 3})
        assert tasks_in_flight(chosen, plan) == 3
