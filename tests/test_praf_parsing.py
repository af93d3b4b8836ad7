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
