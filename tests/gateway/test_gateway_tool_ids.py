"""The gateway hands agents tool-call ids that do not repeat within an episode.

agentbus's own text parsers (agentbus/llm/tools.py, used for models without
native function calling and by the simulator's server) number calls per
answer: ``call_0``, ``call_1``. Passed through, every answer of an episode
would reuse ``call_0``, and the OpenAI Agents SDK stops the run ("Model reused
a completed tool call ID for a different invocation"). The gateway replaces
such positional ids (and empty ones) with fresh ones and keeps a provider's
own ids.
"""

from __future__ import annotations

from agentbus.gateway.wire import openai_response, openai_stream
from agentbus.gateway.wire_anthropic import anthropic_response
from agentbus.llm.types import Completion, ToolCall


def _result(*ids: str) -> Completion:
    calls = [ToolCall(id=i, name="transfer_to_solver", arguments="{}") for i in ids]
    return Completion(text="", model="sim:weak", tool_calls=calls)


def _openai_ids(result: Completion) -> list[str]:
    return [
        c["id"] for c in openai_response("planner", result)["choices"][0]["message"]["tool_calls"]
    ]


def test_positional_and_empty_ids_become_unique() -> None:
    first = _openai_ids(_result("call_0", "call_1", ""))
    second = _openai_ids(_result("call_0"))
    ids = [*first, *second]
    assert len(set(ids)) == len(ids) and "call_0" not in ids and "" not in ids
    blocks = anthropic_response("planner", _result("call_0"))["content"]
    tool_ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    assert tool_ids and tool_ids[0] != "call_0" and tool_ids[0].startswith("toolu_")
    assert b'"call_0"' not in openai_stream("planner", _result("call_0"), False)


def test_a_providers_own_ids_are_kept() -> None:
    assert _openai_ids(_result("call_Xa81bQ", "chatcmpl-tool-5f2e")) == [
        "call_Xa81bQ",
        "chatcmpl-tool-5f2e",
    ]
