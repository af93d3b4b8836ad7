"""Blame against a truth that can fail: injected mistakes at known calls.

A near-perfect agent on the tools environment (12 tasks) is made to err on
one known call per episode (:mod:`agentbus.app.blame_inject`), and separately
on two, where the second one decides when the first was harmless. Blame must
name the injected call; the same bar is applied to two rules that need no
replay (blame step 0, blame a random rolled mistake), and both must fail it:
a truth line that a method blaming step 0 or a random mistake passes proves
nothing. The bar: pooled step accuracy over both settings at least 0.7
(measured at this commit: blame 11/14, a random mistake 8/14, step 0 3/14).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentbus.app.blame import LOG, BlameOptions
from agentbus.app.blame_cmd import blame
from agentbus.app.blame_inject import inject
from agentbus.app.blame_truth import RULES, beats, score, wilson

BAR = 0.7


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    root = tmp_path_factory.mktemp("inject")
    one, two = inject(root, ["--env", "tools", "--tasks", "12", "--slots", "planning"])
    out = []
    for injected in (one, two):
        anyio.run(blame, BlameOptions(injected.run_dir), io.StringIO())
        lines = (injected.run_dir / LOG).read_bytes().splitlines()
        entries = [orjson.loads(line) for line in lines]
        result = score(entries, injected.truth)
        assert result is not None
        out.append(result)
    return out


def _pooled(scored: list[dict[str, Any]], rule: str) -> tuple[int, int]:
    hits = sum(s["rules"][rule]["step"][0] for s in scored)
    return hits, sum(s["episodes"] for s in scored)


@pytest.mark.slow
def test_blame_names_the_injected_call_and_simple_rules_fail(scored: list[Any]) -> None:
    one, two = scored
    assert one["episodes"] >= 5 and two["episodes"] >= 5
    hits, n = _pooled(scored, "blame")
    assert hits / n >= BAR, (hits, n)
    for rule in ("step 0", "random mistake"):
        wrong, n = _pooled(scored, rule)
        assert wrong / n < BAR, (rule, wrong, n)  # the bar fails a method that needs no replay
    # module accuracy is reported for every rule, with its interval
    for s in scored:
        for r in s["rules"].values():
            k, m, lo, hi = r["module"]
            assert (lo, hi) == wilson(k, m) and r["step"][0] <= k


def test_the_truth_fails_step_zero_and_random_mistakes() -> None:
    """The scoring itself: rules that ignore the truth score what chance gives them."""
    entries = []
    for i in range(40):
        calls = 10
        truth = 3 + i % 6
        entries.append(
            {
                "status": "decisive",
                "step": truth,
                "slot": "action",
                "call_slots": ["planning", "reasoning", "action", "reflection"] * 3,
                "mistakes": sorted({1, truth, 9}),
                "injected": [truth],
                "calls": calls,
            }
        )
    s = score(entries)
    assert s is not None and s["rules"]["blame"]["step"][0] == 40
    assert s["rules"]["step 0"]["step"][0] == 0
    assert s["rules"]["earliest mistake"]["step"][0] == 0  # step 1 is an earlier mistake
    assert 5 <= s["rules"]["random mistake"]["step"][0] <= 22  # about a third
    for rule in ("step 0", "random call", "random mistake", "earliest mistake"):
        assert beats(s, "blame", rule) and not beats(s, rule, "blame")
    assert set(RULES) == {"blame", "step 0", "random call", "earliest mistake", "random mistake"}


def test_injected_profiles_leave_other_runs_alone(tmp_path: Path) -> None:
    """A profile with no mistakes answers as the same profile always did."""
    from agentbus.llm.types import SamplingParams
    from agentbus.sim.mistakes import prompt_key
    from agentbus.sim.model import SimModel

    messages = [{"role": "system", "content": "You are the action module."}]
    messages.append({"role": "user", "content": "do it"})
    params = SamplingParams()
    plain = SimModel().generate("sim:weak", messages, params)  # type: ignore[arg-type]
    faulted = SimModel({"weak": {"mistakes": [prompt_key(messages)]}})  # type: ignore[arg-type]
    other = SimModel({"weak": {"mistakes": ["0" * 16]}})
    assert other.generate("sim:weak", messages, params).text == plain.text  # type: ignore[arg-type]
    assert faulted.generate("sim:weak", messages, params).profile == "weak"  # type: ignore[arg-type]


def test_failure_is_what_the_run_scores() -> None:
    """--threshold: a graded episode fails below the reward bar, whatever its success flag."""
    from agentbus.core.outcome import Outcome

    plain = BlameOptions(Path("."))
    bar = BlameOptions(Path("."), threshold=0.5)
    half = Outcome(reward=0.6, success=False)
    assert not plain.passed(half) and bar.passed(half)
    assert not bar.passed(Outcome(reward=0.4, success=True))
    assert not bar.passed(Outcome(reward=0.9, success=True, error="boom"))
    assert plain.setting("sim:strong") != bar.setting("sim:strong")  # kept apart
