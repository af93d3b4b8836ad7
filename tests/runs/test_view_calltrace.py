"""LLM calls in the trace: prompts stored once per episode, given back exactly."""

from __future__ import annotations

from agentbus.core.calltrace import CallTrace, expand_prompts
from agentbus.llm.types import ChatMessage, Completion

SYSTEM = "You are the reasoning module. " + "Think before you act. " * 20
TASK = "## Task\nWhat is 2 + 3?\n\n" + "Background that repeats every round. " * 10


def _user(rounds: int) -> str:
    history = "".join(
        f"Round {r}\nThought: step {r}\nFeedback: value {r * 7}\n" for r in range(rounds)
    )
    return TASK + "## History\n" + history + "\nWhat is the next step?"


def test_prompts_round_trip_and_repeats_are_not_stored_twice() -> None:
    trace: list[dict[str, object]] = [{"type": "TaskStarted", "sender": "episode", "seq": 1}]
    calls = CallTrace(trace)  # type: ignore[arg-type]
    sent: list[list[ChatMessage]] = []
    for r in range(6):
        messages: list[ChatMessage] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": _user(r)},
        ]
        sent.append(messages)
        calls.add("reasoning", "sim:weak", messages, Completion(text=f"answer {r}", model="weak"))
        trace.append({"type": "Thought", "sender": "reasoning", "seq": 2 + r, "text": f"t{r}"})
    expanded = [e for e in expand_prompts(trace) if e["type"] == "LLMCall"]  # type: ignore[arg-type]
    assert [e["prompt"] for e in expanded] == [
        [{"role": m["role"], "content": m["content"]} for m in msgs] for msgs in sent
    ]
    assert [e["answer"] for e in expanded] == [f"answer {r}" for r in range(6)]
    # stored: the system prompt once, later user prompts as head/middle/tail of earlier ones
    stored = [e for e in trace if e["type"] == "LLMCall"]
    assert all(isinstance(e["prompt"][0][1], int) for e in stored[1:])  # type: ignore[index]
    full = sum(len(m["content"]) for msgs in sent for m in msgs)
    kept = len(repr([e["prompt"] for e in stored]))
    assert kept < full / 3, (kept, full)
    # the trace stays ordered by seq: a call carries the seq of the message before it
    seqs = [e["seq"] for e in trace]
    assert seqs == sorted(seqs)  # type: ignore[type-var]
