"""The console says which part of a run's cost a rerun of its seed reproduces.

Tokens are a function of the seed and the schedule; the cached-input tokens
are not: which call reaches the prompt cache first depends on timing (on
math, whose calculator runs in a worker pool, an audit found 25-29% of
episodes with other cached-input counts on a rerun, an episode's price moving
by up to 45%, run totals by at most 0.2%; ticket identical). docs/cost.md
states it; the console now says it under the cost line whenever the cache
priced some input, instead of printing dollars that look exact.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from agentbus.app.summary import cache_note, print_summary


def _results(cached: int) -> dict[str, Any]:
    run = {
        "billed_usd": 5.4,
        "sent_calls": 6545,
        "sent_tokens": 8_301_323,
        "sent_input_tokens": 7_921_991,
        "sent_cached_input_tokens": cached,
        "agent_usd": 9.4,
    }
    prices = {"per_million_tokens_usd": {"sim:weak": {"priced": True}}}
    shap = {"value": 0.2, "ci_low": 0.1, "ci_high": 0.3, "rank_low": 1, "rank_high": 1}
    return {
        "slots": ["action"],
        "default_model": "sim:weak",
        "models": {"sim:strong": {"shapley": {"action": shap}, "coalitions": {}}},
        "cost": {"run": run, "prices": prices},
    }


def test_a_cached_run_says_its_dollars_depend_on_timing_and_its_tokens_do_not() -> None:
    note = cache_note(_results(6_224_896))
    assert note is not None
    assert "tokens repeat exactly" in note and "depends on call timing" in note
    assert "79% of input" in note and "docs/cost.md" in note
    out = io.StringIO()
    print_summary(_results(6_224_896), Console(file=out, width=200))
    text = out.getvalue()
    assert text.index("at simulated list prices") < text.index("tokens repeat exactly")


def test_no_note_when_nothing_was_cached() -> None:
    assert cache_note(_results(0)) is None
    out = io.StringIO()
    print_summary(_results(0), Console(file=out, width=200))
    assert "repeat exactly" not in out.getvalue()
