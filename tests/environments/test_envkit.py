"""The environment kit's shared pieces behave as every built-in environment relied on."""

from __future__ import annotations

import functools
import random

import pytest

from agentbus import (
    RoleAnswer,
    SituationMemo,
    Task,
    TaskIndex,
    TaskSource,
    UserError,
    Verdict,
    answer_by_verdict,
    env_guide,
    generated_count,
    prompt_sections,
)


def test_sections_first_title_wins_and_bodies_are_stripped() -> None:
    text = "intro\n## Task\n  do it  \n## Plan\nA\n## Task\nlater\n"
    assert prompt_sections(text) == {"Task": "do it", "Plan": "A"}


def test_generated_count_applies_the_limit_and_refuses_bad_input() -> None:
    assert generated_count(TaskSource(count=10, limit=3), "demo") == 3
    with pytest.raises(UserError, match=r"^--tasks must be at least 1 \(got 0\)$"):
        generated_count(TaskSource(count=0), "demo")
    with pytest.raises(UserError, match="demo has no dataset format; no files"):
        generated_count(TaskSource(count=2, dataset="x.jsonl"), "demo", "no files")


def test_task_index_finds_its_own_tasks_by_the_task_section() -> None:
    index = TaskIndex("demo")
    mine = Task(id="1", env="demo", instruction="Add 2 and 3.")
    other = Task(id="2", env="else", instruction="Add 2 and 3!")
    index.add([mine, other])
    assert len(index) == 1
    prompt = [{"role": "user", "content": "## Task\nAdd 2 and 3.\n## History\n(none)"}]
    assert index.find(prompt, prompt_sections) == mine  # type: ignore[arg-type]


def test_a_wrong_answer_alone_draws_from_the_random_stream() -> None:
    how: RoleAnswer[str] = RoleAnswer("??", lambda s: s, lambda s, rng: f"{s}{rng.random()}")
    rng = random.Random(1)
    assert answer_by_verdict(Verdict(correct=True, malformed=True), "x", rng, how) == "??"
    assert answer_by_verdict(Verdict(correct=True), "x", rng, how) == "x"
    assert rng.random() == random.Random(1).random()  # nothing drawn so far
    assert answer_by_verdict(Verdict(correct=False), "x", rng, how).startswith("x0.")


def test_situation_memo_makes_once_and_drops_the_oldest() -> None:
    memo: SituationMemo[int] = SituationMemo(size=2)
    made: list[str] = []

    def make(key: str) -> int:
        made.append(key)
        return len(made)

    for key in ("a", "b", "a", "c", "a"):
        memo.get(key, functools.partial(make, key))
    assert made == ["a", "b", "c", "a"]


def test_env_guide_refuses_an_empty_text() -> None:
    texts = dict.fromkeys(("system", "planning", "reasoning", "action", "reflection"), "x")
    assert list(env_guide(**texts)) == list(texts)
    with pytest.raises(ValueError, match="'reflection' text is empty"):
        env_guide(**{**texts, "reflection": " "})
