"""The simulator's protocols: each answers and fails in its own provider's words.

A client SDK picks its exception class from the status, but agents and
gateways read the body's ``type`` (and OpenAI's ``code``); these pin them per
protocol without starting a server.
"""

from __future__ import annotations

import pytest

from agentbus.sim.model import SimAnswer
from agentbus.sim.protocols import AnthropicProtocol, CompletionsProtocol, Protocol

ANSWER = SimAnswer(
    text="4", prompt_tokens=3, completion_tokens=1, finish_reason="stop", role="r", profile="p"
)


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (400, "x", ("invalid_request_error", None)),
        (404, "x", ("invalid_request_error", "model_not_found")),
        (429, "x", ("rate_limit_error", "rate_limit_exceeded")),
        (500, "x", ("server_error", "internal_error")),
        (503, "server_error", ("server_error", None)),
    ],
)
def test_openai_error_bodies(status: int, kind: str, expected: tuple[str, str | None]) -> None:
    body = Protocol().error(status, kind, "no", "model")["error"]
    assert (body["type"], body["code"]) == expected
    assert body["message"] == "no" and body["param"] == "model"


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, "invalid_request_error"),
        (404, "not_found_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
        (418, "api_error"),
    ],
)
def test_anthropic_error_bodies(status: int, expected: str) -> None:
    body = AnthropicProtocol().error(status, "api_error", "no")
    assert body == {"type": "error", "error": {"type": expected, "message": "no"}}


def test_chat_and_text_completion_answers() -> None:
    chat = Protocol().response("id1", "weak", ANSWER)
    assert chat["object"] == "chat.completion" and chat["id"] == "id1"
    assert chat["choices"][0]["message"] == {"role": "assistant", "content": "4"}
    assert chat["usage"] == {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    text = CompletionsProtocol().response("id2", "weak", ANSWER)
    assert text["object"] == "text_completion" and text["choices"][0]["text"] == "4"
    assert "message" not in text["choices"][0] and text["usage"] == chat["usage"]
    piece = CompletionsProtocol().stream_piece("id2", "weak", "4")
    assert b'"object":"text_completion"' in piece and b'"text":"4"' in piece
    assert b'"object":"chat.completion.chunk"' in Protocol().stream_piece("id1", "weak", "4")
