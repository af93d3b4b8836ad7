"""Blame against a truth that can fail: injected mistakes at known calls.

A near-perfect agent on the ticket environment (12 tasks) is made to err on
one known call per episode (:mod:`agentbus.app.blame_inject`), and separately
on two: the decisive one and a later one. Every method is held
to the same bar (:func:`agentbus.app.blame_truth.shortfalls`): it names the
injected call in at least 80% of the failures of each setting, and its 95%
Wilson interval lies above step 0's and a random call's. Blame passes; each
wrong method fails it, and the test says which check: step 0, a random call,
a random rolled mistake (rules that need no replay), the
previous decision rule (placebo = the slot's own model asked again) and the
first flip (no placebo), the last two run by blame's own code on the same
failures. Measured at this commit (one mistake / decisive first, 7 failures each):
blame 7 and 7; step 0 1 and 1, a random call 0 and 0 (fail every check); a random
mistake 6 and 4 (fails "two mistakes: ... named the injected call in 4 of 7"); the
old rule 4 and 4 and the first flip 5 and 5 (fail the 80% check in both).
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentbus.app.blame import LOG, BlameOptions
from agentbus.app.blame_cmd import blame
from agentbus.app.blame_inject import REPAIR, Injected, inject
from agentbus.app.blame_truth import RULES, beats, score, shortfalls, verdicts_of, wilson

#: the decision rules run on the same failures, beside blame's own
METHODS: dict[str, dict[str, Any]] = {
    "blame": {},
    "old rule": {"placebo": "redraw"},
    "first flip": {"placebos": 0},
}
WRONG = ("step 0", "random call", "random mistake", "old rule", "first flip")


def _verdicts(injected: Injected, method: dict[str, Any]) -> list[dict[str, Any]]:
    options = replace(BlameOptions(injected.run_dir), **method)
    anyio.run(blame, options, io.StringIO())
    setting = options.setting(REPAIR)
    lines = (injected.run_dir / LOG).read_bytes().splitlines()
    return [e for e in map(orjson.loads, lines) if e["setting"] == setting]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    root = tmp_path_factory.mktemp("inject")
    args = ["--env", "ticket", "--tasks", "12", "--slots", "planning"]
    runs = inject(root, args, rounds=2, harmless=False)
    out = []
    for injected in (runs.one, runs.after):
        found = {name: _verdicts(injected, method) for name, method in METHODS.items()}
        others = {name: verdicts_of(v) for name, v in found.items() if name != "blame"}
        result = score(found["blame"], injected.truth, others=others)
        assert result is not None
        out.append(result)
    return out


@pytest.mark.slow
def test_blame_names_the_injected_call_and_wrong_methods_fail(scored: list[Any]) -> None:
    one, two = scored
    assert one["episodes"] >= 5 and two["episodes"] >= 5, (one["episodes"], two["episodes"])
    assert shortfalls(one, two, "blame") == []
    for method in WRONG:  # each wrong method fails the same bar
        assert shortfalls(one, two, method), (method, one["rules"][method], two["rules"][method])
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


def test_an_injected_mistake_ignores_the_wording_of_padding() -> None:
    """The fault is the situation: the same content padded otherwise errs the same way."""
    from agentbus.sim.filler import PADDING
    from agentbus.sim.mistakes import prompt_key

    def prompt(thought: str) -> list[Any]:
        return [
            {"role": "system", "content": "You are the action module."},
            {"role": "user", "content": thought},
        ]

    same = prompt(f"Next action: look[desk]\n\n{PADDING[0]} {PADDING[3]}")
    other = prompt(f"Next action: look[desk]\n\n{PADDING[5]}")
    assert prompt_key(same) == prompt_key(other)
    assert prompt_key(same) != prompt_key(prompt(f"Next action: look[door]\n\n{PADDING[0]}"))


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
