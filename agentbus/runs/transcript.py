"""One episode as a conversation, and two episodes of one task side by side.

The record of a traced episode carries the bus trace: every message in
publish order (the task, the environment's observations and feedback, each
module's plan, thoughts, actions, reflections, and any message type a module
or a gateway agent defines) plus an ``LLMCall`` entry per model call with the
prompt the module sent and the answer it got (:mod:`agentbus.core.calltrace`).
:func:`transcript` turns that into turns: each bus message is one turn, and
the model calls a module made before it spoke are attached to the turn they
produced, so a reader sees "reasoning (sim:strong) said X" with the prompt one
click away. Unknown message types are kept whole (sender, type, fields): the
renderers show any message, and know a few types well.

:func:`coalition_diff` aligns two episodes of the same task by step (the
environment's round) and marks the first step where what the modules did
differs. :func:`render_text` is the terminal form (``agentbus.report
RUN_DIR --episode ID``).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from agentbus.core.calltrace import LLM_CALL, expand_prompts
from agentbus.core.coalitions import coalition_label
from agentbus.runs.episodes import coalition_key_of, failure_kind

#: trace fields every message has; the rest are the message's own
COMMON = frozenset({"type", "sender", "seq", "episode_id"})
#: the message's main text, when it has one
TEXT_KEYS = ("text", "instruction", "content", "answer", "message")
ENVIRONMENT = ("environment", "episode")


def _text_of(entry: Mapping[str, Any]) -> str:
    for key in TEXT_KEYS:
        value = entry.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _fields(entry: Mapping[str, Any], text_key: str | None) -> dict[str, Any]:
    skip = COMMON | ({text_key} if text_key else set()) | {"guide"}
    return {k: v for k, v in entry.items() if k not in skip and v is not None}


#: the gateway's messages: a user's agent's model calls, numbered per episode
GATEWAY_TYPES = ("GatewayRequest", "GatewayAnswer")


def _gateway_calls(trace: Sequence[Mapping[str, Any]]) -> bool:
    return any(e.get("type") in GATEWAY_TYPES and isinstance(e.get("call"), int) for e in trace)


def _steps(trace: Sequence[Mapping[str, Any]]) -> list[int]:
    """The step of each entry: its ``round`` (carried forward), else feedback count.

    A user's agent (through the gateway) makes its whole run one environment
    step, so there the unit is its model calls: a request and its answer are
    step ``call``; the task comes before them (0), the result and the verdict
    after the last one.
    """
    if _gateway_calls(trace):
        out, current, last = [], 0, 0
        for e in trace:
            call = e.get("call")
            if e.get("type") in GATEWAY_TYPES and isinstance(call, int):
                current = call
                last = max(last, call)
            elif e.get("type") in ("ActionProposed", "Feedback"):
                current = last + 1
            out.append(current)
        return out
    has_round = any(isinstance(e.get("round"), int) for e in trace)
    steps, current, feedback = [], 0, 0
    for e in trace:
        if has_round:
            if isinstance(e.get("round"), int):
                current = e["round"]
            steps.append(current)
        else:
            steps.append(feedback + (0 if e.get("type") in ("TaskStarted", "Observation") else 1))
            if e.get("type") == "Feedback":
                feedback += 1
    return steps


def _answer_of(outcome: Mapping[str, Any]) -> dict[str, Any]:
    """The agent's answer, the expected one and the verdict (a user's agent; else None)."""
    raw = outcome.get("details")
    details: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    result = details.get("result")
    answer = result.get("answer") if isinstance(result, Mapping) else None
    return {
        "answer": answer,
        "expected": details.get("expected"),
        "verdict": details.get("verdict"),
    }


def transcript(event: Mapping[str, Any]) -> dict[str, Any]:
    """The conversation of one ``episode.ended`` event (see the module docstring)."""
    outcome = event.get("outcome") or {}
    raw_assignment = event.get("assignment")
    assignment: Mapping[str, Any] = raw_assignment if isinstance(raw_assignment, Mapping) else {}
    trace = expand_prompts(outcome.get("trace") or [])
    steps = _steps(trace)
    turns: list[dict[str, Any]] = []
    pending: dict[str, list[dict[str, Any]]] = {}
    for entry, step in zip(trace, steps, strict=True):
        sender = str(entry.get("sender", "?"))
        if entry.get("type") == LLM_CALL:
            pending.setdefault(sender, []).append(
                {
                    "model": entry.get("model") or assignment.get(sender),
                    "prompt": entry.get("prompt") or [],
                    "answer": entry.get("answer", ""),
                    "tool_calls": entry.get("tool_calls") or [],
                    "cached": bool(entry.get("cached")),
                    "tokens": entry.get("tokens"),
                }
            )
            continue
        text_key = next(
            (k for k in TEXT_KEYS if isinstance(entry.get(k), str) and entry.get(k)), None
        )
        role = "environment" if sender in ENVIRONMENT else "module"
        if entry.get("type") == "TaskStarted":
            role = "task"
        turns.append(
            {
                "type": str(entry.get("type", "?")),
                "sender": sender,
                "role": role,
                "step": step,
                "seq": entry.get("seq"),
                "model": assignment.get(sender) if role == "module" else None,
                "text": _text_of(entry),
                "fields": _fields(entry, text_key),
                "calls": pending.pop(sender, []),
            }
        )
    for sender, calls in pending.items():  # calls whose answer never became a message
        for call in calls:
            turns.append(
                {
                    "type": LLM_CALL,
                    "sender": sender,
                    "role": "module",
                    "step": steps[-1] if steps else 0,
                    "seq": None,
                    "model": call["model"],
                    "text": call["answer"],
                    "fields": {},
                    "calls": [call],
                }
            )
    slots = [str(s) for s in event.get("slots") or []]
    coalition = event.get("coalition")
    raw_usage = outcome.get("usage")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
    return {
        "episode_id": event.get("episode_id"),
        "task_id": event.get("task_id"),
        "repeat": event.get("repeat", 0),
        "env": event.get("env"),
        "test_model": event.get("test_model"),
        "default_model": event.get("default_model"),
        "coalition": coalition_key_of(coalition, slots) if isinstance(coalition, list) else "",
        "slots": slots,
        "assignment": dict(assignment),
        "traced": bool(outcome.get("trace")),
        "verdict": {
            "reward": outcome.get("reward"),
            "success": bool(outcome.get("success")),
            "steps": outcome.get("steps"),
            "reason": outcome.get("reason"),
            "error_kind": outcome.get("error_kind"),
            "error": outcome.get("error"),
            "failure": failure_kind(outcome),
            **_answer_of(outcome),
            "details": outcome.get("details") or {},
        },
        "unit": "call" if _gateway_calls(trace) else "step",
        "usage": dict(usage),
        "turns": turns,
    }


_SPACE = re.compile(r"\s+")


def _signature(turn: Mapping[str, Any]) -> str:
    module = turn["fields"].get("module", "") if turn["type"] in GATEWAY_TYPES else ""
    return f"{turn['type']}|{turn['sender']}|{module}|{_SPACE.sub(' ', turn['text']).strip()}"


def coalition_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Two episodes' transcripts aligned by step, with the first divergent step marked.

    A step diverges when the messages in it (type, sender and text, spaces
    folded) differ; the step where the two episodes first part is where one
    coalition's modules did something the other's did not.
    """
    ta, tb = transcript(a), transcript(b)
    by_step: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for side, t in ((0, ta), (1, tb)):
        for turn in t["turns"]:
            by_step.setdefault(int(turn["step"]), ([], []))[side].append(turn)
    rows = []
    first: int | None = None
    for step in sorted(by_step):
        left, right = by_step[step]
        same = [_signature(x) for x in left] == [_signature(x) for x in right]
        if not same and first is None:
            first = step
        rows.append({"step": step, "a": left, "b": right, "same": same})
    notes = []
    if (ta["task_id"], ta["repeat"]) != (tb["task_id"], tb["repeat"]):
        notes.append("the two episodes ran different tasks: the steps are not comparable")
    if not ta["traced"] or not tb["traced"]:
        notes.append("an episode has no stored trace (the run used --no-trace)")
    differs = [s for s in ta["slots"] if ta["assignment"].get(s) != tb["assignment"].get(s)]
    return {
        "a": {k: v for k, v in ta.items() if k != "turns"},
        "b": {k: v for k, v in tb.items() if k != "turns"},
        "slots_differ": differs,
        "first_divergent_step": first,
        "unit": "call" if "call" in (ta["unit"], tb["unit"]) else "step",
        "steps": rows,
        "notes": notes,
    }


# ---------------------------------------------------------------- terminal


def _wrap(text: str, indent: str, width: int) -> str:
    lines = []
    for para in text.splitlines() or [""]:
        lines.extend(
            textwrap.wrap(para, width=width, initial_indent=indent, subsequent_indent=indent)
            or [indent.rstrip()]
        )
    return "\n".join(lines)


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render_text(t: Mapping[str, Any], *, prompts: bool = False, width: int = 100) -> str:
    """The transcript as plain text for a terminal (prompts only when asked: they are long)."""
    v = t["verdict"]
    head = [
        f"episode {t['episode_id']}",
        f"task {t['task_id']}"
        + (f" (repeat {t['repeat']})" if t.get("repeat") else "")
        + (f", env {t['env']}" if t.get("env") else ""),
        f"coalition {coalition_label(t['coalition'] or '')} "
        f"on test model {t.get('test_model') or '-'}",
        "slots: " + ", ".join(f"{s}={t['assignment'].get(s, '?')}" for s in t["slots"]),
    ]
    if v.get("verdict") is not None:  # a user's agent: what it answered comes first
        head.append(f"answer {v.get('answer')!r}, expected {v.get('expected')!r}: {v['verdict']}")
    out = ["\n".join(head), ""]
    if not t["traced"]:
        out.append("no message trace stored for this episode (the run used --no-trace)")
    step = None
    for turn in t["turns"]:
        if turn["step"] != step:
            step = turn["step"]
            out.append(f"--- {t.get('unit', 'step')} {step} ---")
        who = turn["sender"] + (f" ({turn['model']})" if turn.get("model") else "")
        out.append(f"[{turn['type']}] {who}")
        if turn["text"]:
            out.append(_wrap(turn["text"], "    ", width))
        for key, value in turn["fields"].items():
            if key in ("round", "info", "data", "steps", "max_steps", "env", "task_id"):
                continue
            out.append(f"    {key}: {_short(value)}")
        for call in turn["calls"]:
            tokens = call.get("tokens") or [0, 0]
            note = ", shared with another coalition" if call.get("cached") else ""
            out.append(
                f"    (model call to {call['model']}: {tokens[0]} tokens in, {tokens[1]} out{note})"
            )
            if prompts:
                for m in call["prompt"]:
                    out.append(f"      > {m['role']}:")
                    out.append(_wrap(m["content"], "      > ", width))
                out.append("      < answer:")
                out.append(_wrap(call["answer"], "      < ", width))
            for tc in call.get("tool_calls") or []:
                out.append(f"    tool call: {_short(tc)}")
    verdict = "success" if v["success"] else f"not solved ({v['failure']})"
    out.append("")
    out.append(
        f"verdict: {verdict}, reward {v['reward']}, {v['steps']} steps; reason: {v['reason']}"
    )
    if v.get("error"):
        out.append(f"error: {v['error']}")
    if v["details"]:
        out.append("details: " + _short(v["details"], 400))
    return "\n".join(out)
