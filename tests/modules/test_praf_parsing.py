"""The action parser is tolerant of real model output and never raises."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modules.praf.parsing import parse_action, parse_steps


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("```action\ncalculator: 2+2\n```", "calculator: 2+2"),
        ("Sure.\n```\nanswer: 5\n```\nDone.", "answer: 5"),
        ("```python\nsearch: circles\n```", "search: circles"),
        ("I will compute it.\n```action\ncalculator: 3*4", "calculator: 3*4"),  # unclosed
        ("Thought: easy.\nAction: answer: \\frac{1}{2}", "answer: \\frac{1}{2}"),
        ("**Action:** `calculator: 7*6`", "calculator: 7*6"),
        ("answer: 42", "answer: 42"),
        ("  `search: pythagorean theorem`  ", "search: pythagorean theorem"),
        ("```action\nmove r1 left\nmove r2 up\n```", "move r1 left\nmove r2 up"),
        ("Action: move r1 left\nmove r2 up\n\nThat is all.", "move r1 left\nmove r2 up"),
    ],
)
def test_actions_are_found_in_many_shapes(answer: str, expected: str) -> None:
    parsed = parse_action(answer)
    assert parsed.ok and parsed.text == expected


@pytest.mark.parametrize(
    "answer", ["", "   \n ", "```action\n\n```", "I am not sure.\nLet me think more about it."]
)
def test_unparseable_answers_give_a_reason(answer: str) -> None:
    parsed = parse_action(answer)
    assert not parsed.ok and parsed.error


@given(st.text(max_size=300))
def test_parse_action_never_raises(answer: str) -> None:
    parsed = parse_action(answer)
    assert parsed.ok or parsed.error


def test_plan_steps_from_numbered_or_bulleted_lists() -> None:
    plan = "Approach first.\n1. Find the roots.\n2) Square them.\n- Add them\nStep 4: submit"
    assert parse_steps(plan) == ["Find the roots.", "Square them.", "Add them", "submit"]
    assert parse_steps("Just prose, no list.") == []


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # a block of working in LaTeX first: the action block wins, not the first block
        ("```latex\n\\frac{a}{b}\n```\n\n```action\ncalculator: 1/2\n```", "calculator: 1/2"),
        # the instruction echoed before the answer: backticks mid-sentence open nothing
        (
            "Write the action as one ```action``` block.\n```action\nanswer: 7\n```",
            "answer: 7",
        ),
        # the template copied first, then filled in
        ("```action\n<the action>\n```\n```action\nsearch: area\n```", "search: area"),
        # a one-line fence
        ("```git status```", "git status"),
        # an untagged block beats one in another language when no action block exists
        ("```bash\nls\n```\n```\nanswer: 3\n```", "answer: 3"),
        # run-on cut at the stop sequence leaves the action whole
        ("```action\ncalculator: 2*3\n```\n", "calculator: 2*3"),
    ],
)
def test_real_small_model_shapes(answer: str, expected: str) -> None:
    parsed = parse_action(answer)
    assert parsed.ok and parsed.text == expected, parsed


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("Write the action for the current thought as one ```action``` block.", "no action"),
        ("```action\n<the action>\n```", "template"),
        ("(invalid: the fenced block is empty)", "no action"),
        ("(none)", "no action"),
        ("```latex\nx^2 + y^2\n```", "latex, not action"),
        ("```action\n```", "empty"),
    ],
)
def test_echoes_copies_and_other_languages_are_no_action(answer: str, why: str) -> None:
    parsed = parse_action(answer)
    assert not parsed.ok and why in (parsed.error or ""), parsed


def test_the_history_shows_no_copyable_reason_and_keeps_to_its_budget() -> None:
    from agentbus import ActionProposed, Feedback, Thought
    from modules.praf.view import EpisodeView

    view = EpisodeView()
    for n in range(1, 7):
        view.think(Thought(text=f"thought {n} " + "x" * 200, round=n))
        valid = n != 2
        view.act(ActionProposed(text="answer: 1", round=n, valid=valid, parse_error="empty"))
        view.feedback(Feedback(text=f"feedback {n}", round=n))
    full = view.history()
    assert "Action: (none)" in full and "(invalid" not in full and "empty" not in full
    short = view.history(budget_tokens=150)
    assert len(short) < len(full) and short.startswith("(")
    assert "Round 6" in short and "Round 1\n" not in short
    assert "earlier rounds are not shown" in short
    # the newest round stays even when it alone is over the budget
    assert "Round 6" in view.history(budget_tokens=1)


def test_an_answer_cut_at_the_output_limit_needs_a_closed_block() -> None:
    closed = "Thinking first.\n```action\ncalculator: 2*3\n```\nand then I would"
    assert parse_action(closed, cut=True).text == "calculator: 2*3"
    for cut in ("```action\ncalculator: 2*", "Action: calculator: 2*", "calculator: 2*"):
        parsed = parse_action(cut, cut=True)
        assert not parsed.ok and "cut at the output limit" in (parsed.error or "")
        assert parse_action(cut).ok  # the same text, not cut, is read as before
