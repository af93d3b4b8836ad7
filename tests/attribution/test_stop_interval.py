"""At an adaptive stop the figures lead with the interval that holds there (issue 42, item 2).

Stopping when the top slot looks separated (``--stop mvp``) selects runs
where it is high: the fixed-sample interval then covered 0.90 for the top
slot and 0.80 for action, while the console showed it. Now an ``mvp`` or
``ranking`` run leads with the anytime-valid interval everywhere that reads
``ci_low``/``ci_high`` (console, results.md, plots, the dashboard's
snapshot) and says so; a ``halfwidth`` run keeps the fixed-sample interval,
measured to cover at its stop. Coverage at the stop is replayed on stored
simulator outcomes (benchmarks/stop_coverage.py, the full version: 2,000
runs per cell on three environments). ``adaptive.done`` is decided where
the stop reason is, so the two agree.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np

from agentbus.core.events import EventHub
from attribution.exact import shapley_values
from attribution.game import Game
from attribution.results import model_summary
from attribution.service import AttributionService
from attribution.stop_interval import ANYTIME, FIXED, lead_with_stop_interval
from attribution.tables import to_markdown

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import stop_coverage

SLOTS = ("planning", "reasoning", "action")


def game(tasks: int = 25, seed: int = 0) -> Game:
    rng = np.random.default_rng(seed)
    g = Game(SLOTS)
    for t in range(tasks):
        base = rng.random()
        for mask in range(8):
            p = min(1.0, 0.2 * base + 0.3 * (mask >> 1 & 1) + 0.15 * (mask & 1))
            g.add_mask(mask, f"t{t}", float(rng.random() < p))
    return g


def results_of(g: Game) -> dict:
    summary = model_summary(g, horizon=2000)
    return {"slots": list(SLOTS), "interval": FIXED, "models": {"sim:strong": summary}}


def test_an_mvp_or_ranking_stop_leads_with_the_anytime_valid_interval() -> None:
    g = game()
    est = shapley_values(g, horizon=2000)
    for rule in ("mvp", "ranking"):
        results = lead_with_stop_interval(results_of(g), rule)
        assert results["interval"] == ANYTIME
        rows = results["models"]["sim:strong"]["shapley"]
        for s in SLOTS:
            row = est[s]
            assert rows[s]["ci_low"] == row.cs_low and rows[s]["ci_high"] == row.cs_high
            assert rows[s]["fixed_low"] == row.ci_low and rows[s]["fixed_high"] == row.ci_high
            assert rows[s]["ci_high"] - rows[s]["ci_low"] > row.ci_high - row.ci_low
        again = lead_with_stop_interval(copy.deepcopy(results), rule)
        assert again == results  # applied once: a rebuilt report does not swap back
        assert "anytime-valid interval]" in to_markdown({**results, "adaptive": {}})


def test_a_halfwidth_stop_and_a_fixed_run_keep_the_fixed_sample_interval() -> None:
    g = game()
    for stop in ("halfwidth", None):
        results = lead_with_stop_interval(results_of(g), stop)
        assert results["interval"] == FIXED
        assert "fixed_low" not in results["models"]["sim:strong"]["shapley"]["action"]


def test_the_live_snapshot_of_an_mvp_run_says_which_interval_it_shows() -> None:
    for stop, adaptive, expected in (("mvp", True, ANYTIME), ("halfwidth", True, FIXED)):
        service = AttributionService(
            EventHub(), SLOTS, adaptive=adaptive, target_halfwidth=0.05, stop=stop
        )
        service.collector.games["sim:strong"] = game()
        snap = service.snapshot()
        assert snap["interval"] == expected, stop
        row = snap["models"]["sim:strong"]["shapley"]["action"]
        assert (row["ci_low"] == row["cs_low"]) == (expected == ANYTIME)


def test_the_interval_shown_covers_at_each_rules_stop() -> None:
    """Replayed adaptive runs (100 per cell) on math and tools: the shown interval covers.

    The anytime-valid interval shown at mvp and ranking stops measured
    0.995-1.000 per slot (2,000 runs, docs/statistics.md); a 0.95 bar at 100
    runs leaves it a failure chance below 1e-4 per slot. The halfwidth
    stop's fixed-sample interval measured 0.945-0.960 per slot: at 100 runs
    per cell the bar is 0.90 per slot, about 2.3 standard errors below (its
    own 5% check is tests/attribution/test_stop_rules.py, pooled). Fixed seeds: the
    replays are the same every time. Without the swap to the anytime-valid
    interval, nothing here fails (the fixed one covers 0.945-0.96 in these
    replays); the tests above check the swap itself.
    """
    for env in ("math", "tools"):
        for k, rule in enumerate(stop_coverage.RULES):
            slots, fixed, anytime, _, _ = stop_coverage.replay(env, rule, 100, seed=k)
            shown = anytime if stop_coverage.SHOWN[rule] == "anytime" else fixed
            cover = shown.mean(axis=0)
            bar = 0.95 if rule != "halfwidth" else 0.90
            assert np.all(cover >= bar), (env, rule, dict(zip(slots, cover, strict=True)))


async def test_done_is_decided_with_the_stop_reason() -> None:
    """results.json's ``adaptive.done`` is the scheduler's, set where the rule stopped it.

    It was recomputed after the blocks in flight had ended, on more data: 4
    runs said ``done=false`` beside "the top slot is identified".
    """
    from types import SimpleNamespace

    from agentbus.app.adaptive import AdaptiveScheduler

    verdicts = iter([True, False])  # met at the stop, no longer on the final data
    service = SimpleNamespace(done=lambda target: next(verdicts), stop="mvp")
    factory = SimpleNamespace(plan=SimpleNamespace(varied=SLOTS))
    scheduler = AdaptiveScheduler(
        factory,  # type: ignore[arg-type]
        service,  # type: ignore[arg-type]
        tasks=[],
        test_models=["sim:strong"],
        target_halfwidth=0.05,
        max_episodes=None,
        deterministic=True,
    )
    assert await scheduler() is None
    assert scheduler.reached and "top slot is identified" in scheduler.stop_reason
    assert not service.done(0.05)  # what results.json used to report
