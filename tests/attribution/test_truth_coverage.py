"""End to end: the real pipeline shows the estimator's intervals, they cover, runs stop by the rule.

Each replication is a real evaluation (the application layer, the simulator
in process at speed 0, the environment (git for the fixed-size runs, math for
the adaptive ones), the run store, the live attribution service) of the
two-slot game planning/action on a fresh task set (generator seed), with 3%
of simulator calls failing and no LLM-level retries, so episodes fail on the
infrastructure and are retried. The true phi comes from the stored reference
table (``python -m agentbus.truth show``).

What only this file checks is that the whole pipeline delivers the method;
the method's calibration at many sizes is measured on thousands of pool
replications, cheaply, in tests/attribution/test_interval_coverage.py (final intervals)
and tests/attribution/test_live_coverage.py (live snapshots). So each run is checked two
ways:

* exactness (cannot pass by luck): from the run's own event log, the
  counting outcomes of the admitted tasks go through the offline estimator
  (per-task Shapley values, :func:`attribution.variance.per_task_bounds`),
  and the interval the run printed, and the mid-run live snapshot's (the
  first estimable one with half the tasks admitted: the first K blocks),
  must equal it to 1e-9. For ``--adaptive`` runs (stop the first time every
  fixed-sample half-width is at most the target with at least 20 tasks in,
  the Chow-Robbins rule; a pool of 30 tasks, the truth table's block; one
  task block in flight, so the stop is exact) the offline replay of the rule
  on the same outcomes must stop at the same task count.
  A run where some cell was given up after its retries has an incomplete
  block and another variance form; it is left out of the exactness checks
  (none were in these seeds), and at most 10% may be.
* coverage against the true phi, with fewer replications than a
  calibration study needs, under a bar whose error rates are stated
  (binomial, the two slots of a run treated as independent):

  - fixed runs, 40 runs = 80 (run, slot) checks, final and mid-run each:
    coverage >= 0.875 (70 of 80). A method that covers 95% fails it with
    probability 0.2%; one that covers 90% fails it with probability 17%
    (that is the power; the exactness check and the pool studies are what
    catch a miscalibrated method).
  - adaptive runs, 50 runs = 100 checks: coverage >= 0.88 (88 of 100) and
    <= 0.99. A 95% method fails the lower bar with probability 0.15%, a 90%
    method with probability 20%; the upper bar fails a 95% method with
    probability 0.6% (it catches intervals that claim near certainty).
    (80 runs until 2026-11-27; cut to 50 to keep the suite under 15 minutes.)
  Measured (these seeds): fixed final 0.938, mid-run 0.963; adaptive 0.960
  (planning 0.96, action 0.96; 0.938 over the 80-run version); every run exact.
  The earlier version of this file ran 120 fixed and 250 adaptive runs for a
  two-sided 93-97% bar (6 min 23 s alone; unfinished after 11 min 30 s
  under the load average of about 6 in which this version took 4 min 4 s,
  190 s CPU); measured there: fixed final
  0.950, mid-run 0.958, adaptive 0.960.

How the adaptive runs stop, from the rule and what was measured: no run
stops before 20 tasks (80 episodes; the rule) nor after the pool's 30; with
every slot's per-task spread what it is on math, 225 of 250 runs (90%)
stopped on the target in the earlier version, median 104 episodes (26
tasks); 72 of 80 with median 108 in the 80-run version, 41 of 50 with median
100 here. Bars with a margin: at least 75% stop on the target (a 90% rate
fails that with probability 0.1% over 50 runs),
median under 116 episodes (29 tasks). The exact replay
above is the strict check of the stop itself.

Replications run in two processes (the machine's two cores; in the suite
they share them with another xdist worker); everything is seeded, so the
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
from agentbus.core.logs import configure
from agentbus.sim.truth.table import load
from attribution.exact import exact_values
from attribution.variance import MIN_CLUSTERS, per_task_bounds

#: the fixed-size runs play git, which runs wholly in process (math's calculator calls
#: sympy in worker processes): about 40% less CPU per replication. The adaptive runs
#: play math: its table's 30-task block is the pool (see ADAPTIVE_POOL).
ENV = {False: "git", True: "math"}
SLOTS = ["planning", "action"]
MODEL = "sim:strong"
REPS = 40
TASKS = 20
ADAPTIVE_REPS = 50
#: the truth table's block: math's generator cycles knowledge points, then levels, so
#: a 60-task pool holds levels 1-5 while the table's blocks hold levels 1-3
ADAPTIVE_POOL = 30
ADAPTIVE_TARGET = 0.16
FIRST_SEED = 500_000  # far from the seeds the reference table was made with
#: coverage bars and their error rates: see the module docstring
FIXED_BAR = 0.875
ADAPTIVE_BAR = (0.88, 0.99)
ON_TARGET_BAR = 0.75
MEDIAN_EPISODES_BAR = 116


def truth(env: str) -> dict[str, float]:
    table = load(env, "sim:weak", MODEL)
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


Bounds = dict[str, tuple[float, float]]


def offline_per_task(events: list[dict[str, Any]], blocks: int | None = None) -> np.ndarray | None:
    """Per-task Shapley values (tasks x slots, in block order) from the log's counting outcomes.

    Independent of the live service: each cell's latest counting reward,
    the first ``blocks`` declared blocks (all when None), and the two-slot
    Shapley formula written out. None when a task lacks a cell (given up).
    """
    cells: dict[tuple[int, frozenset[str]], float] = {}
    for event in events:
        if (
            event["type"] == "episode.ended"
            and event.get("kind") == "coalition"
            and event.get("counts")
            and event.get("test_model") == MODEL
        ):
            cells[(int(event["block"]), frozenset(event["coalition"]))] = float(
                event["outcome"]["reward"]
            )
    block_ids = sorted({b for b, _ in cells})
    if blocks is not None:
        block_ids = [b for b in block_ids if b < blocks]
    p, a = SLOTS
    rows = []
    for b in block_ids:
        try:
            v0 = cells[(b, frozenset())]
            vp = cells[(b, frozenset({p}))]
            va = cells[(b, frozenset({a}))]
            vpa = cells[(b, frozenset({p, a}))]
        except KeyError:
            return None
        rows.append([0.5 * (vp - v0 + vpa - va), 0.5 * (va - v0 + vpa - vp)])
    if blocks is not None and len(rows) != blocks:
        return None
    return np.array(rows)


def offline_bounds(per_task: np.ndarray) -> Bounds:
    low, high = per_task_bounds(per_task)
    return {s: (float(low[i]), float(high[i])) for i, s in enumerate(SLOTS)}


def offline_stop(per_task: np.ndarray) -> int:
    """Tasks at which the half-width rule first holds on these outcomes (else all of them)."""
    for n in range(MIN_CLUSTERS, len(per_task) + 1):
        low, high = per_task_bounds(per_task[:n])
        if np.all((high - low) / 2.0 <= ADAPTIVE_TARGET):
            return n
    return len(per_task)


def shown(shap: dict[str, Any], low: str = "ci_low", high: str = "ci_high") -> Bounds:
    return {s: (float(shap[s][low]), float(shap[s][high])) for s in SLOTS}


def mid_run(events: list[dict[str, Any]]) -> tuple[Bounds, np.ndarray | None] | None:
    """The first estimable snapshot once half the run's tasks are admitted, and its offline twin.

    Chosen by admitted tasks, not by episodes ended: which snapshot follows the
    half-way episode depends on scheduling, while the estimate at a given task
    count does not. The offline twin uses the outcomes logged before the snapshot.
    """
    for i, event in enumerate(events):
        if event["type"] == "attribution.snapshot" and event.get("admitted_tasks", 0) >= TASKS / 2:
            shap = event["models"][MODEL]["shapley"]
            if event.get("estimable") and shap:
                return shown(shap), offline_per_task(events[:i], event["admitted_tasks"])
    return None


def replicate(seeds: list[int], adaptive: bool) -> list[dict[str, Any]]:
    """Run one evaluation per seed; what it showed and what the offline estimator says."""

    configure("error")  # the 3% injected faults would log thousands of warnings per test

    async def one(seed: int) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp) / "run"
            report = await evaluate(config(seed, run_dir, adaptive), Console(file=io.StringIO()))
            events = [orjson.loads(x) for x in (run_dir / "events.jsonl").read_bytes().splitlines()]
        model = report.results["models"][MODEL]
        per_task = offline_per_task(events)
        mid = None if adaptive else mid_run(events)
        return {
            "seed": seed,
            "final": shown(model["shapley"]),
            "anytime": shown(model["shapley"], "cs_low", "cs_high"),
            "offline": None if per_task is None else offline_bounds(per_task),
            "offline_stop": None if per_task is None else offline_stop(per_task),
            "mid": None if mid is None else mid[0],
            "offline_mid": None if mid is None or mid[1] is None else offline_bounds(mid[1]),
            "episodes": model["episodes"],
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


def coverage(intervals: list[Bounds], phi: dict[str, float]) -> float:
    hits = [lo <= phi[s] <= hi for iv in intervals for s, (lo, hi) in iv.items()]
    return float(np.mean(hits))


def assert_same(got: Bounds, want: Bounds, what: str) -> None:
    for s in SLOTS:
        assert got[s] == pytest.approx(want[s], rel=1e-9, abs=1e-12), (
            f"{what}: {s} {got[s]} != {want[s]}"
        )


def true_phi(env: str) -> dict[str, float]:
    try:
        return truth(env)
    except Exception as exc:  # the table is part of the package; its absence is a bug
        pytest.fail(f"no truth table for {env} sim:weak vs sim:strong: {exc}")


@pytest.mark.slow
def test_final_and_mid_run_intervals_are_the_estimators_and_cover() -> None:
    phi = true_phi(ENV[False])
    reps = run_all(REPS, adaptive=False, offset=0)
    exact = [r for r in reps if r["offline"] is not None]
    assert len(exact) >= 0.9 * REPS, "at most 10% of runs may give a cell up"
    for r in exact:
        assert_same(r["final"], r["offline"], f"seed {r['seed']} final")
    mids = [r for r in reps if r["mid"] is not None]
    assert len(mids) >= 0.9 * REPS, "most runs should have an estimate by mid-run"
    exact_mids = [r for r in mids if r["offline_mid"] is not None]
    assert len(exact_mids) >= 0.9 * len(mids)
    for r in exact_mids:
        assert_same(r["mid"], r["offline_mid"], f"seed {r['seed']} mid-run")
    final = coverage([r["final"] for r in reps], phi)
    mid = coverage([r["mid"] for r in mids], phi)
    print(
        f"coverage: final {final:.3f}, mid-run {mid:.3f} ({len(mids)} runs); exact: "
        f"{len(exact)} final, {len(exact_mids)} mid-run; truth {phi}"
    )
    assert final >= FIXED_BAR, f"final coverage {final:.3f}"
    assert mid >= FIXED_BAR, f"mid-run coverage {mid:.3f}"


@pytest.mark.slow
def test_adaptive_runs_stop_as_the_rule_says_and_cover() -> None:
    """The stop and the interval shown at it are the offline rule's; see the module docstring."""
    phi = true_phi(ENV[True])
    reps = run_all(ADAPTIVE_REPS, adaptive=True, offset=REPS)
    exact = [r for r in reps if r["offline"] is not None]
    assert len(exact) >= 0.9 * len(reps), "at most 10% of runs may give a cell up"
    for r in exact:
        assert_same(r["final"], r["offline"], f"seed {r['seed']} at the stop")
        assert r["episodes"] == 4 * r["offline_stop"], f"seed {r['seed']} stopped off the rule"
    on_target = [r for r in reps if r["stop"].startswith("every 95% interval")]
    episodes = sorted(r["episodes"] for r in reps)
    median = episodes[len(episodes) // 2]
    cover = coverage([r["final"] for r in reps], phi)
    anytime = coverage([r["anytime"] for r in reps], phi)
    by_slot = {s: round(coverage([{s: r["final"][s]} for r in reps], phi), 3) for s in SLOTS}
    print(
        f"adaptive coverage: shown {cover:.3f} {by_slot} (anytime-valid {anytime:.3f}); "
        f"{len(on_target)}/{len(reps)} stopped on the target; exact {len(exact)}; "
        f"episodes median {median} of {4 * ADAPTIVE_POOL}"
    )
    assert len(on_target) >= ON_TARGET_BAR * len(reps), "most runs stop on the target, not the pool"
    assert episodes[0] >= 4 * MIN_CLUSTERS, "no run stops before 20 tasks"
    assert median < MEDIAN_EPISODES_BAR
    low, high = ADAPTIVE_BAR
    assert low <= cover <= high, f"the interval shown at the stop covers {cover:.3f}"
    assert anytime >= cover, "the anytime-valid interval beside it is wider"
