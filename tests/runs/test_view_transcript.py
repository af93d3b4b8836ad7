"""Transcripts and diffs from records alone: known and unknown message types, steps, divergence."""

from __future__ import annotations

from typing import Any

from agentbus.runs.transcript import coalition_diff, render_text, transcript

SLOTS = ["planner", "solver"]


def record(coalition: list[str], action: str, *, rounds: bool = True) -> dict[str, Any]:
    def r(n: int) -> dict[str, int]:
        return {"round": n} if rounds else {}

    trace = [
        {"type": "TaskStarted", "sender": "episode", "seq": 1, "instruction": "add 2 and 3"},
        {"type": "Observation", "sender": "environment", "seq": 2, "text": "go"},
        {
            "type": "LLMCall",
            "sender": "planner",
            "seq": 2,
            "model": "m-plan",
            "prompt": [["system", "plan well"], ["user", "add 2 and 3"]],
            "answer": "PLAN: add",
            "tokens": [10, 2],
        },
        # a gateway agent's own message type: nothing in the viewer knows it
        {
            "type": "GatewayAnswer",
            "sender": "planner",
            "seq": 3,
            "content": "PLAN: add",
            "request_id": "r-17",
            "finish_reason": "stop",
        },
        {"type": "ActionProposed", "sender": "solver", "seq": 4, "text": "2+2", **r(1)},
        {
            "type": "Feedback",
            "sender": "environment",
            "seq": 5,
            "text": "no",
            "done": False,
            **r(1),
        },
        {"type": "ActionProposed", "sender": "solver", "seq": 6, "text": action, **r(2)},
        {
            "type": "Feedback",
            "sender": "environment",
            "seq": 7,
            "text": "end",
            "done": True,
            **r(2),
        },
    ]
    ok = action == "2+3"
    return {
        "episode_id": "+".join(coalition) or "-",
        "task_id": "t1",
        "repeat": 0,
        "test_model": "strong",
        "coalition": coalition,
        "slots": SLOTS,
        "assignment": {s: ("strong" if s in coalition else "weak") for s in SLOTS},
        "outcome": {
            "reward": float(ok),
            "success": ok,
            "steps": 2,
            "reason": "done",
            "trace": trace,
        },
    }


def test_any_message_type_is_a_turn_and_calls_attach_to_what_they_produced() -> None:
    t = transcript(record(["solver"], "2+3"))
    kinds = [(x["type"], x["sender"], x["step"]) for x in t["turns"]]
    assert kinds == [
        ("TaskStarted", "episode", 0),
        ("Observation", "environment", 0),
        ("GatewayAnswer", "planner", 0),
        ("ActionProposed", "solver", 1),
        ("Feedback", "environment", 1),
        ("ActionProposed", "solver", 2),
        ("Feedback", "environment", 2),
    ]
    gateway = t["turns"][2]
    assert gateway["text"] == "PLAN: add" and gateway["model"] == "weak"
    assert gateway["fields"] == {"request_id": "r-17", "finish_reason": "stop"}
    [call] = gateway["calls"]
    assert call["prompt"] == [
        {"role": "system", "content": "plan well"},
        {"role": "user", "content": "add 2 and 3"},
    ]
    assert t["verdict"]["success"] and t["verdict"]["failure"] == ""
    text = render_text(t, prompts=True)
    assert "[GatewayAnswer] planner (weak)" in text and "request_id: r-17" in text
    assert "> system:" in text and "plan well" in text


def test_steps_without_rounds_follow_the_environment_feedback() -> None:
    t = transcript(record([], "2+4", rounds=False))
    assert [x["step"] for x in t["turns"]] == [0, 0, 1, 1, 1, 2, 2]
    assert t["verdict"]["failure"] == "wrong"


def test_diff_marks_the_first_step_where_the_coalitions_part() -> None:
    d = coalition_diff(record([], "2+4"), record(["solver"], "2+3"))
    assert d["slots_differ"] == ["solver"]
    assert d["first_divergent_step"] == 2
    assert [r["same"] for r in d["steps"]] == [True, True, False]
    same = coalition_diff(record([], "2+4"), record([], "2+4"))
    assert same["first_divergent_step"] is None
