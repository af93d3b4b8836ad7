"""End to end: do the run's 95% intervals cover the simulator's true phi 93-97% of the time?

Each replication is a real evaluation (the application layer, the simulator
in process at speed 0, the environment (git for the fixed-size runs, math for
the adaptive ones), the run store, the attribution
service) of the two-slot game planning/action on a fresh task set (generator
seed), with 3% of simulator calls failing and no LLM-level retries, so
episodes fail on the infrastructure and are retried. The true phi comes from
the stored reference table (``python -m agentbus.truth show``). Checked:

* fixed runs (20 tasks): the final interval, in 93-97% of (replication,
  slot) pairs; and the interval of a snapshot taken mid-run (the first
  estimable one after half the episodes ended: whole task blocks, admitted
  in order);
* ``--adaptive`` runs, stopped by the scheduler the first time every
  fixed-sample half-width is under the target with at least 20 tasks in (the
  Chow-Robbins rule; a pool of 30 tasks, the truth table's block, of which
  about 24 are used; one task block in flight, so the stop is exact and the
  run deterministic): the interval the run shows at the stop, in 93-97% of
  (replication, slot) pairs. Measured 0.960 over these 250 replications
  (planning 0.972, action 0.948; 225 of 250 stopped on the target, median
  104 of 120 episodes), 0.942 before the intervals were widened on the
  skewed side (median 92 episodes);
  the replay of the same rule on real
  outcomes (benchmarks/stopping_rules.py) predicts 0.94-0.96. The pool must
  be the table's 30 tasks: math's generator cycles knowledge points, then
  levels, so a 60-task pool holds levels 1-5 while the table's blocks hold
  levels 1-3.

One set of 100 replications has a coverage spread of 0.012-0.019 by itself
(an earlier version of this test measured 0.925 on its first 100 adaptive
seeds, 0.948 on 250), hence 250 adaptive replications. With 2 x 120 (fixed)
and 2 x 250 (adaptive) checks, a method that truly covers 90% passes the 93%
bar with probability about 5% (fixed) and 1% (adaptive), treating the checks
as independent. Replications
run in two processes (the machine's two cores); everything is seeded, so the
result is deterministic.
"""

from __future__ import annotations

import io
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import orjson
import pytest
from rich.console import Console

from agentbus.app.config import RunConfig
from agentbus.app.evaluate import evaluate
from agentbus.logs import configure
from agentbus.sim.truth.table import load
from attribution.exact import exact_values

#: the fixed-size runs play git, which runs wholly in process (math's calculator calls
#: sympy in worker processes): about 40% less CPU per replication. The adaptive runs
#: play math; see the module docstring for what git showed there.
ENV = {False: "git", True: "math"}
SLOTS = ["planning", "action"]
REPS = 120
TASKS = 20
ADAPTIVE_REPS = 250
ADAPTIVE_POOL = 30
ADAPTIVE_TARGET = 0.16
FIRST_SEED = 500_000  # far from the seeds the reference table was made with


def truth(env: str) -> dict[str, float]:
    table = load(env, "sim:weak", "sim:strong")
    phi = exact_values(np.array(table.vector(SLOTS)), "shapley")
    return dict(zip(SLOTS, phi.tolist(), strict=True))


def config(seed: int, run_dir: Path, adaptive: bool) -> RunConfig:
    data: dict[str, Any] = {
        "env": ENV[adaptive],
        "seed": seed,
        "tasks": ADAPTIVE_POOL if adaptive else TASKS,
        "slots": SLOTS,
        "progress": "off",
        "trace": False,
        "plots": False,
        "run_dir": str(run_dir),
        "sim": {
            "speed": 0.0,
            "transport": "inprocess",
            "faults": {"rate_500": 0.03, "seed": seed},
        },
        "llm": {"sim_path": "inproc", "limits": {"max_retries": 0}},
        "attempts": 10,
    }
    if adaptive:
        data.update({"adaptive": True, "target_halfwidth": ADAPTIVE_TARGET, "tasks_in_flight": 1})
    return RunConfig.model_validate(data)


def mid_run_interval(run_dir: Path) -> dict[str, tuple[float, float]] | None:
    """The first estimable snapshot once half the run's tasks are admitted.

    Chosen by admitted tasks, not by episodes ended: which snapshot follows the
    half-way episode depends on scheduling (the same seeds gave mid-run 0.921
    and 0.963), while the estimate at a given task count does not.
    """
    for line in (run_dir / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event["type"] == "attribution.snapshot" and event.get("admitted_tasks", 0) >= TASKS / 2:
            shap = event["models"]["sim:strong"]["shapley"]
            if event.get("estimable") and shap:
                return {s: (shap[s]["ci_low"], shap[s]["ci_high"]) for s in SLOTS}
    return None


def replicate(seeds: list[int], adaptive: bool) -> list[dict[str, Any]]:
    """Run one evaluation per seed; their final (and mid-run) intervals."""

    configure("error")  # the 3% injected faults would log thousands of warnings per test

    async def one(seed: int) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp) / "run"
            report = await evaluate(config(seed, run_dir, adaptive), Console(file=io.StringIO()))
            shap = report.results["models"]["sim:strong"]["shapley"]
            return {
                "final": {s: (shap[s]["ci_low"], shap[s]["ci_high"]) for s in SLOTS},
                "anytime": {s: (shap[s]["cs_low"], shap[s]["cs_high"]) for s in SLOTS},
                "mid": None if adaptive else mid_run_interval(run_dir),
                "episodes": report.results["models"]["sim:strong"]["episodes"],
                "stop": (report.results.get("adaptive") or {}).get("stop_reason", ""),
            }

    async def all_of() -> list[dict[str, Any]]:
        return [await one(seed) for seed in seeds]

    return anyio.run(all_of)


def run_all(n: int, adaptive: bool, offset: int) -> list[dict[str, Any]]:
    seeds = [FIRST_SEED + offset + i for i in range(n)]
    halves = [seeds[0::2], seeds[1::2]]
    with ProcessPoolExecutor(max_workers=2) as pool:
        parts = list(pool.map(replicate, halves, [adaptive, adaptive]))
    return [r for part in parts for r in part]


def coverage(intervals: list[dict[str, tuple[float, float]]], phi: dict[str, float]) -> float:
    hits = [lo <= phi[s] <= hi for iv in intervals for s, (lo, hi) in iv.items()]
    return float(np.mean(hits))


def true_phi(env: str) -> dict[str, float]:
    try:
        return truth(env)
    except Exception as exc:  # the table is part of the package; its absence is a bug
        pytest.fail(f"no truth table for {env} sim:weak vs sim:strong: {exc}")


@pytest.mark.slow
def test_final_and_mid_run_intervals_cover_the_true_phi() -> None:
    phi = true_phi(ENV[False])
    reps = run_all(REPS, adaptive=False, offset=0)
    final = coverage([r["final"] for r in reps], phi)
    mids = [r["mid"] for r in reps if r["mid"] is not None]
    assert len(mids) >= 0.9 * REPS, "most runs should have an estimate by mid-run"
    mid = coverage(mids, phi)
    print(f"coverage: final {final:.3f}, mid-run {mid:.3f} ({len(mids)} runs), truth {phi}")
    assert 0.93 <= final <= 0.97, f"final coverage {final:.3f}"
    # Mid-run (about 10 tasks) the interval is the paired one too (t at T-1
    # df, widened on the skewed side; a floor where no task differed).
    # Measured: final 0.950, mid-run 0.958.
    # Its per-slot calibration at 5-30 tasks is checked on thousands of
    # replications in tests/test_interval_coverage.py, and live snapshots
    # under block admission (and without it, where they fail) in
    # tests/test_live_coverage.py; this end-to-end check only guards the bar.
    assert mid >= 0.93, f"mid-run coverage {mid:.3f}"


@pytest.mark.slow
def test_adaptive_runs_stop_on_the_target_and_cover_93_to_97_percent() -> None:
    """The interval an adaptive run shows at its stop covers 93-97%; see the module docstring."""
    phi = true_phi(ENV[True])
    reps = run_all(ADAPTIVE_REPS, adaptive=True, offset=REPS)
    on_target = [r for r in reps if r["stop"].startswith("every 95% interval")]
    episodes = sorted(r["episodes"] for r in reps)
    shown = coverage([r["final"] for r in reps], phi)
    anytime = coverage([r["anytime"] for r in reps], phi)
    by_slot = {s: coverage([{s: r["final"][s]} for r in reps], phi) for s in SLOTS}
    print(
        f"adaptive coverage: shown {shown:.3f} {by_slot} (anytime-valid {anytime:.3f}); "
        f"{len(on_target)}/{len(reps)} stopped on the target; "
        f"episodes median {episodes[len(episodes) // 2]} of {4 * ADAPTIVE_POOL}"
    )
    assert len(on_target) >= 0.9 * len(reps), "most runs stop on the target, not the pool"
    assert episodes[0] >= 4 * 20, "no run stops before 20 tasks"
    assert episodes[len(episodes) // 2] < 0.9 * 4 * ADAPTIVE_POOL  # measured 92 of 120
    assert 0.93 <= shown <= 0.97, f"the interval shown at the stop covers {shown:.3f}"
    assert anytime >= shown, "the anytime-valid interval beside it is wider"
