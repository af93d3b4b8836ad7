"""Cells given up after every attempt failed: reported by coalition, warned about when uneven."""

from __future__ import annotations

import io

from rich.console import Console

from agentbus.core.outcome import Outcome
from agentbus.core.record import EpisodeRecord
from attribution.collect import Collector
from attribution.rates import rate_interval
from attribution.results import build_results
from attribution.tables import render_console, to_markdown

SLOTS = ("planning", "action")
KEYS = {"": (), "planning": ("planning",), "action": ("action",), "planning+action": SLOTS}


def record(key: str, task: int, ok: bool, attempt: int = 1) -> EpisodeRecord:
    outcome = (
        Outcome(reward=float(task % 2), success=bool(task % 2))
        if ok
        else Outcome(reward=0.0, error="HTTP 500", error_kind="infra")
    )
    return EpisodeRecord(
        counts=outcome.counts_for_value,
        episode_id=f"sim:strong|{key or '-'}|t{task}|r0",
        task_id=f"t{task}",
        attempt=attempt,
        test_model="sim:strong",
        default_model="sim:weak",
        coalition=KEYS[key],
        slots=SLOTS,
        outcome=outcome,
    )


def collector(give_up: dict[str, int]) -> Collector:
    c = Collector(SLOTS)
    for key in KEYS:
        for task in range(20):
            lost = task < give_up.get(key, 0)
            for attempt in (1, 2, 3) if lost else (1,):
                c.observe(record(key, task, ok=not lost, attempt=attempt))
    return c


def test_uneven_given_up_cells_are_listed_by_coalition_with_a_warning() -> None:
    results = build_results(collector({"": 8}))
    section = results["given_up"]
    assert section["cells"] == 8
    assert section["models"]["sim:strong"]["by_coalition"] == {"": 8}
    assert section["uneven"] and "unevenly spread" in section["warning"]
    assert results["models"]["sim:strong"]["coalitions"][""]["n"] == 12
    md = to_markdown(results)
    assert "cells given up after every attempt failed" in md and "Warning" in md
    out = io.StringIO()
    Console(file=out, width=200).print(render_console(results))
    assert "cells given up after every attempt failed, left out of the means: 8" in out.getvalue()


def test_even_given_up_cells_carry_no_warning_and_none_print_nothing() -> None:
    even = build_results(collector(dict.fromkeys(KEYS, 1)))["given_up"]
    assert even["cells"] == 4 and not even["uneven"] and even["warning"] is None
    none = build_results(collector({}))
    assert none["given_up"]["cells"] == 0
    assert "given up" not in to_markdown(none)


def test_wilson_rates_never_collapse_and_count_tasks() -> None:
    zero = rate_interval([0.0] * 30)
    assert zero["ci_low"] == 0.0 and 0.10 < zero["ci_high"] < 0.12  # 0/30: [0, 0.114]
    # three identical replays of each of 10 tasks are 10 units, not 30
    replays = rate_interval([1.0, 1.0, 1.0, 0.0, 0.0, 0.0] * 5, [t // 3 for t in range(30)])
    plain = rate_interval([1.0, 0.0] * 5)
    assert replays["tasks"] == 10 and replays["episodes"] == 30
    assert abs(replays["n_eff"] - 10) < 1e-9
    assert (replays["ci_low"], replays["ci_high"]) == (plain["ci_low"], plain["ci_high"])


def test_labels_state_only_what_is_there() -> None:
    from agentbus.app.budget import estimate_line
    from agentbus.app.truth import _caveats
    from agentbus.sim.truth.table import load
    from attribution.game import Game
    from attribution.results import model_summary

    one_block = {"confidence": 0.95, "usd": 1.0, "tokens": 100, "blocks": 1, "of": 30}
    one_block.update(usd_low=None, usd_high=None, tokens_low=None, tokens_high=None)
    line = estimate_line(one_block)
    assert "interval" in line and "95% interval" not in line  # "no interval yet"
    game = Game(SLOTS)
    for mask in range(4):
        game.add_mask(mask, "only-task", float(mask % 2))
    assert model_summary(game)["within_task_rho"] is None  # n/a, not 0.0, with one task
    # only generators that cycle task kinds with the index get that caveat (math's,
    # git's, robot's, atp's and os's prefixes are random samples of the table's block
    # since issue 42)
    shop_notes = _caveats({"tasks": 10}, load("shopping", "sim:weak", "sim:strong"))
    assert any("cycles task kinds" in n for n in shop_notes)
    for env in ("math", "navigation", "git", "robot", "atp", "os"):
        assert not any(
            "cycle" in n for n in _caveats({"tasks": 10}, load(env, "sim:weak", "sim:strong"))
        )
