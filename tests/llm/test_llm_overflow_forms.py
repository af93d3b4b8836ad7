"""Every form a server answers a context overflow in, against a stand-in server (issue 39 item 1).

A small aiohttp server answers the OpenAI and Anthropic routes with the exact
bodies real servers send when the prompt, or the prompt and the answer being
written, outgrows the window: HTTP 400 and HTTP 500 (llama-cpp-python's numpy
error when an answer runs into the end of a 1,100-token window, recorded in
issue 39; vLLM's and llama.cpp's 500s), and a 200 whose answer stopped with
``finish_reason: "length"`` before its own output limit. Each is the agent's
:class:`ContextOverflow`, sent once and never retried; a 500 in other words
stays an infrastructure error after the retries.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from agentbus.core.errors import ContextOverflow, InfraError
from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.retry import cut_at_context_limit, is_context_overflow
from agentbus.llm.router import LLMRouter
from agentbus.llm.types import ChatMessage, SamplingParams
from tests.helpers.stub_http import serving

PROMPT: list[ChatMessage] = [
    {"role": "user", "content": "Continue this list of numbers forever: " + "1, 2, " * 30}
]

#: (model name the stand-in reads, HTTP status, JSON body) as each server sends it
ANSWERS: dict[str, tuple[int, dict[str, Any]]] = {
    "llama-cpp-python-500": (
        500,
        {
            "error": {
                "message": "could not broadcast input array from shape (49152,) into shape (0,)",
                "type": "internal_server_error",
            }
        },
    ),
    "vllm-500": (
        500,
        {
            "object": "error",
            "message": "The decoder prompt (length 5000) is longer than the maximum model "
            "length of 4096. Make sure that `max_model_len` is no smaller than the number of "
            "text tokens.",
            "type": "InternalServerError",
            "code": 500,
        },
    ),
    "llama-server-500": (
        500,
        {"error": {"code": 500, "message": "Context size has been exceeded.", "type": "server"}},
    ),
    "openai-responses-400": (
        400,
        {
            "error": {
                "message": "Your input exceeds the context window of this model. Please adjust "
                "your input and try again.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    ),
    "other-500": (500, {"error": {"message": "CUDA error: an illegal memory access", "type": "x"}}),
}

ANTHROPIC_400 = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "input length and `max_tokens` exceed context limit: 197659 + 8192 > 200000, "
        "decrease input length or `max_tokens` and try again",
    },
}


def _completion(model: str, finish: str, tokens: int) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "3, 4, 5, 6"},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 1089, "completion_tokens": tokens, "total_tokens": 1100},
    }


class StandIn:
    """The stand-in server: what it was asked, and the answers above."""

    def __init__(self) -> None:
        self.requests: dict[str, int] = {}

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        model = body["model"]
        self.requests[model] = self.requests.get(model, 0) + 1
        limit = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        if model == "window-cut":  # the window ended the answer 11 tokens in
            return web.json_response(_completion(model, "length", 11))
        if model == "max-tokens-cut":  # the answer's own limit ended it
            return web.json_response(_completion(model, "length", limit))
        status, payload = ANSWERS[model]
        return web.json_response(payload, status=status)

    async def messages(self, request: web.Request) -> web.Response:
        model = (await request.json())["model"]
        self.requests[model] = self.requests.get(model, 0) + 1
        if model == "claude-window":  # the window ended the answer (newer models say so)
            return web.json_response(
                {
                    "id": "m",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": "3, 4, 5"}],
                    "stop_reason": "model_context_window_exceeded",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 199_990, "output_tokens": 10},
                }
            )
        return web.json_response(ANTHROPIC_400, status=400)


@pytest.fixture
async def stand_in(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[StandIn, str]]:
    """The stand-in provider and its base URL, with the API keys its clients need set."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    server = StandIn()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server.chat)
    app.router.add_post("/v1/messages", server.messages)
    async with serving(app) as url:
        yield server, f"{url}/v1"


def router() -> LLMRouter:
    limits = EndpointLimits(max_retries=2, backoff_base=0.001, backoff_max=0.002)
    return LLMRouter(LLMConfig(limits=limits))


@pytest.mark.parametrize(
    "model", ["llama-cpp-python-500", "vllm-500", "llama-server-500", "openai-responses-400"]
)
async def test_each_overflow_body_is_the_agents_failure_sent_once(
    stand_in: tuple[StandIn, str], model: str
) -> None:
    server, url = stand_in
    async with router() as r:
        with pytest.raises(ContextOverflow):
            await r.client(f"openai:{url}#{model}").complete(PROMPT, SamplingParams(max_tokens=192))
        stats = r.stats()["total"]
    assert server.requests[model] == 1  # never retried: the same request cannot fit later
    assert stats["context_overflows"] == 1 and stats["errors"] == 0


async def test_anthropic_context_limit_400_is_an_overflow(stand_in: tuple[StandIn, str]) -> None:
    server, url = stand_in
    async with router() as r:
        with pytest.raises(ContextOverflow, match="exceed context limit"):
            await r.client(f"anthropic:{url.removesuffix('/v1')}#claude").complete(PROMPT)
    assert server.requests["claude"] == 1


async def test_anthropic_context_window_stop_is_an_overflow(stand_in: tuple[StandIn, str]) -> None:
    _, url = stand_in
    async with router() as r:
        llm = r.client(f"anthropic:{url.removesuffix('/v1')}#claude-window")
        with pytest.raises(ContextOverflow, match="after 10 of 512"):
            await llm.complete(PROMPT, SamplingParams(max_tokens=512))


async def test_an_answer_the_window_cut_short_is_an_overflow_and_cached(
    stand_in: tuple[StandIn, str],
) -> None:
    server, url = stand_in
    params = SamplingParams(max_tokens=192, temperature=0.0)
    async with router() as r:
        llm = r.client(f"openai:{url}#window-cut")
        for _ in range(2):  # the second is answered by the cache: the same overflow, no call
            with pytest.raises(ContextOverflow, match="end of the context window after 11 of 192"):
                await llm.complete(PROMPT, params)
        own_limit = await r.client(f"openai:{url}#max-tokens-cut").complete(PROMPT, params)
    assert server.requests["window-cut"] == 1
    assert own_limit.finish_reason == "length"  # cut at its own max_tokens: an answer


async def test_a_500_in_other_words_stays_an_infrastructure_error(
    stand_in: tuple[StandIn, str],
) -> None:
    server, url = stand_in
    async with router() as r:
        with pytest.raises(InfraError, match="gave up after 3 attempts"):
            await r.client(f"openai:{url}#other-500").complete(PROMPT)
    assert server.requests["other-500"] == 3


def test_the_words_alone() -> None:
    numpy = "could not broadcast input array from shape ({},) into shape ({},)"
    assert is_context_overflow(500, numpy.format(49152, 0))
    assert not is_context_overflow(500, numpy.format(3, 4))  # some other numpy trouble
    assert not is_context_overflow(503, "maximum context length is 2048 tokens")
    assert cut_at_context_limit("length", 11, 192)
    assert not cut_at_context_limit("length", 192, 192)
    assert not cut_at_context_limit("stop", 11, 192)
    assert not cut_at_context_limit("length", 0, 192)  # no usage reported: cannot tell
