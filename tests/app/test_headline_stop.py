"""The headline agrees with the stop: a slot is called the MVP only when something identifies it.

An audit found every one of 17 ``--stop mvp`` runs that never met the rule
headed "MVP: ..." (rank 1-1 from the fixed-sample rank intervals, no caveat)
while the run's last line said the top slot was not identified; a plain run
whose rank intervals had not separated the top slot was headed "MVP: ..."
too, with "not yet told apart" at the end. Now the console, results.md and
the viewer's snapshot print :func:`attribution.headline.headline`'s lines:
``MVP: ...`` only when the stop rule was met (or, without such a rule, the
final rank interval of the top slot is 1-1), else ``MVP not identified: ...``.
"""

from __future__ import annotations

import copy
from typing import Any

from attribution.headline import NOT_IDENTIFIED, headline
from attribution.headline import headline as console_headline
from attribution.tables import to_markdown


def _row(v: float, lo: float, hi: float, rl: int, rh: int) -> dict[str, float]:
    return {"value": v, "ci_low": lo, "ci_high": hi, "rank_low": rl, "rank_high": rh}


def _results(top_rank_high: int = 1) -> dict[str, Any]:
    return {
        "slots": ["planning", "action"],
        "default_model": "sim:weak",
        "confidence": 0.95,
        "models": {
            "sim:strong": {
                "shapley": {
                    "planning": _row(0.05, 0.01, 0.09, 1 if top_rank_high > 1 else 2, 2),
                    "action": _row(0.3, 0.2, 0.4, 1, top_rank_high),
                },
                "coalitions": {},
            }
        },
    }


def test_an_mvp_run_that_never_met_its_rule_names_no_mvp() -> None:
    results = _results()
    results["adaptive"] = {"stop": "mvp", "done": False, "stop_reason": "the tasks ran out"}
    (line,) = headline(results)
    assert line.startswith(f"{NOT_IDENTIFIED}: action +0.30 [0.20, 0.40] > planning"), line
    assert "its stop rule (--stop mvp) was not met" in line
    assert console_headline(results) == [line]  # the console prints the same line
    assert f"**{line}**" in to_markdown(results)  # and results.md
    # the live snapshot the viewer reads carries adaptive/stop/done at its top level
    snapshot = {**_results(), "adaptive": True, "stop": "mvp", "done": False}
    assert headline(snapshot) == [line]


def test_a_met_rule_names_the_mvp() -> None:
    results = _results()
    results["adaptive"] = {"stop": "ranking", "done": True, "stop_reason": "ranked"}
    (line,) = headline(results)
    assert line.startswith("MVP: action +0.30") and "not met" not in line
    snapshot = {**_results(), "adaptive": True, "stop": "mvp", "done": True}
    assert headline(snapshot)[0].startswith("MVP: action")


def test_without_a_rule_the_final_rank_interval_decides() -> None:
    (named,) = headline(_results(top_rank_high=1))
    assert named.startswith("MVP: action")
    (open_,) = headline(_results(top_rank_high=2))
    assert open_.startswith(f"{NOT_IDENTIFIED}: action +0.30")
    assert "action is not yet told apart from planning (rank intervals)" in open_
    halfwidth = copy.deepcopy(_results(top_rank_high=2))
    halfwidth["adaptive"] = {"stop": "halfwidth", "done": True, "stop_reason": "narrow"}
    assert headline(halfwidth) == [open_]  # a halfwidth stop identifies nothing by itself
