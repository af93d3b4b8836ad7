"""Issue 41 item 9, the wording: one name for v(S), an adaptive run says how it ended, links.

Before, the console said "v(all default)" where results.md said "Acc (all
default)", ``--stop mvp`` printed "adaptive run stopped" after running every
episode, and the dashboard's deep links were documented nowhere.
"""

from __future__ import annotations

from pathlib import Path

from agentbus.app.summary import adaptive_line, attribution_table
from attribution.tables import to_markdown

ROOT = Path(__file__).resolve().parents[2]


def _results() -> dict:
    row = {"value": 0.3, "ci_low": 0.1, "ci_high": 0.5}
    model = {"shapley": {"a": row}, "banzhaf": {"a": row}, "acc_default": 0.2,
             "acc_test": 0.5, "delta_acc": 0.3, "coalitions": {}}  # fmt: skip
    return {"models": {"sim:strong": model}, "slots": ["a"], "default_model": "sim:weak"}


def test_v_of_s_has_one_name_on_the_console_and_in_results_md() -> None:
    from rich.console import Console

    console = Console(record=True, width=120)
    console.print(attribution_table(_results()))
    shown = console.export_text()
    markdown = to_markdown(_results())
    for name in ("v(all default)", "v(all test)"):
        assert name in shown and f"| {name} |" in markdown
    assert "Acc" not in markdown and "Acc" not in shown


def test_an_adaptive_run_says_whether_its_rule_stopped_it() -> None:
    reason = "the top slot is told apart from every other (rank intervals)"
    assert adaptive_line(reason, True, "mvp") == f"adaptive run stopped early: {reason}"
    ran_out = "the tasks ran out before the top slot is told apart; give more tasks"
    line = adaptive_line(ran_out, False, "mvp")
    assert line.startswith("adaptive run ran to the end without its stop rule (--stop mvp)")
    assert "stopped" not in line
    capped = adaptive_line("issued --max-episodes 64", False, "mvp")
    assert capped == (
        "adaptive run stopped at its cap (--max-episodes 64) before its rule (--stop mvp) was met"
    )


def test_the_deep_links_are_documented() -> None:
    doc = (ROOT / "docs" / "your-agent.md").read_text()
    for link in ("#episode=EPISODE_ID", "#diff=EPISODE_A&b=EPISODE_B", "#flips=SLOT"):
        assert link in doc
    views = (ROOT / "agentbus" / "runs" / "static" / "views.js").read_text()
    for key in ('h.has("episode")', 'h.has("diff")', 'h.has("flips")'):
        assert key in views  # the documented links are the ones the page reads
