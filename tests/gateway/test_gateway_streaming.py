"""The gateway streams tokens as the upstream produces them (issue 41 item 8).

Before, a streamed answer was one buffered body: at ``--sim-speed 1`` the
first chunk came when the stream ended. Here the simulator runs at speed 4
(an answer takes about half a second to decode), and each test reads the
SSE lines with their arrival times:

* the simulator's own stream and the gateway's both spread their text
  chunks over the decode time (bursts at least 0.1 s apart in all), and
  the gateway's text and usage equal the answer the router recorded;
* tool calls arrive as deltas the official SDKs assemble (OpenAI
  ``tool_calls``, Anthropic ``tool_use`` with ``input_json_delta``);
* a repeated call is answered from the cache and still streamed, and the
  per-module usage counts both calls;
* an Anthropic upstream (the Anthropic SDK backend) streams as well.
"""

from __future__ import annotations

import time
from contextlib import AbstractAsyncContextManager
from typing import Any

import aiohttp
import orjson
import pytest

from agentbus.core.environment import Task
from tests.helpers.gateway_rig import CALCULATOR, Rig, open_rig

TASK = Task(id="s-1", env="external", instruction="What is 6 * 7?", hidden={"answer": "42"})


def make_rig(anthropic_upstream: bool = False) -> AbstractAsyncContextManager[Rig]:
    """One solver on a simulator that serves at its paced speed; its model is the simulator
    as itself, or behind the Anthropic SDK backend."""
    spec = "anthropic:{sim}#weak" if anthropic_upstream else "sim:weak"
    return open_rig(TASK, {"solver": spec}, episode_id="ep-s", speed=4.0)


async def _events(url: str, body: dict[str, Any], key: str) -> list[tuple[float, Any]]:
    """(seconds since the request, parsed data) per SSE data line."""
    headers = {"Authorization": f"Bearer {key}", "x-api-key": key}
    out: list[tuple[float, Any]] = []
    async with aiohttp.ClientSession() as http:
        started = time.perf_counter()
        async with http.post(url, json=body, headers=headers) as resp:
            assert resp.status == 200, await resp.text()
            assert resp.headers["Content-Type"].startswith("text/event-stream")
            async for line in resp.content:
                if line.startswith(b"data: ") and line.strip() != b"data: [DONE]":
                    out.append((time.perf_counter() - started, orjson.loads(line[6:])))
    return out


def _text_times(events: list[tuple[float, Any]]) -> tuple[list[float], str]:
    times, text = [], ""
    for at, data in events:
        for choice in data.get("choices") or ():
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                times.append(at)
                text += piece
    return times, text


def _spread(times: list[float]) -> None:
    """The text came in bursts spread over the decode time, not in one buffered body.

    Measured between the first and the last text chunk, not from the request:
    a client's first request also pays its connection set-up (1.5 s under
    load), which says nothing about streaming. At speed 4 the simulator
    decodes for about 0.3-0.5 s in up to 8 bursts; a buffered body arrives
    within a millisecond.
    """
    assert len(times) >= 4, times
    bursts = [t for i, t in enumerate(times) if i == 0 or t - times[i - 1] > 0.01]
    assert len(bursts) >= 3 and times[-1] - times[0] >= 0.1, times


def _solver_stream(question: str) -> dict[str, Any]:
    """A streamed chat request to the solver that asks for the usage chunk at the end."""
    return {
        "model": "solver",
        "messages": [{"role": "user", "content": question}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def _streamed_through_the_gateway(
    rig: Rig, question: str
) -> tuple[list[tuple[float, Any]], str, dict[str, Any]]:
    """Ask the solver through the gateway's SSE route: (events, text, the traced answer).

    Checks on the way what every streamed answer must show: the text arrived spread
    over time, and it is the text the gateway's trace recorded for the call.
    """
    url = f"{rig.ctx.base_url}/chat/completions"
    events = await _events(url, _solver_stream(question), rig.ctx.api_key)
    times, text = _text_times(events)
    _spread(times)
    answer = next(m for m in rig.trace if m["type"] == "GatewayAnswer")
    assert text == answer["text"]
    return events, text, answer


async def test_text_streams_over_time_from_sim_and_through_the_gateway() -> None:
    async with make_rig() as rig:
        ask = [{"role": "user", "content": "What is 6 * 7?"}]
        direct = await _events(
            f"{rig.sim_url}/chat/completions",
            {"model": "weak", "messages": ask, "stream": True},
            "sim",
        )
        _spread(_text_times(direct)[0])
        events, text, answer = await _streamed_through_the_gateway(rig, "What is 6 * 8?")
        assert "ANSWER:" in text
        usage = events[-1][1]["usage"]
        assert usage["completion_tokens"] == answer["completion_tokens"] > 0
        assert events[-2][1]["choices"][0]["finish_reason"] == "stop"


async def test_tool_call_deltas_assemble_in_both_sdks() -> None:
    async with make_rig() as rig:
        stream = await rig.ctx.openai.chat.completions.create(
            model="solver",
            messages=[{"role": "user", "content": "Compute 6 * 7"}],
            tools=[CALCULATOR],
            stream=True,
        )
        calls: dict[int, dict[str, str]] = {}
        finish = None
        async for chunk in stream:
            for choice in chunk.choices:
                for c in choice.delta.tool_calls or ():
                    entry = calls.setdefault(c.index, {"id": "", "name": "", "args": ""})
                    entry["id"] += c.id or ""
                    entry["name"] += (c.function and c.function.name) or ""
                    entry["args"] += (c.function and c.function.arguments) or ""
                finish = choice.finish_reason or finish
        assert finish == "tool_calls" and list(calls) == [0]
        assert calls[0]["name"] == "calculator" and calls[0]["id"].startswith("call_")
        assert "expression" in orjson.loads(calls[0]["args"])
        async with rig.ctx.anthropic.messages.stream(
            model="solver",
            max_tokens=400,
            messages=[{"role": "user", "content": "Compute 6 * 9"}],
            tools=[
                {
                    "name": "calculator",
                    "input_schema": CALCULATOR["function"]["parameters"],  # type: ignore[index]
                }
            ],
        ) as astream:
            message = await astream.get_final_message()
        kinds = [b.type for b in message.content]
        assert kinds == ["text", "tool_use"] and message.stop_reason == "tool_use"
        assert message.content[1].name == "calculator"
        assert "ANSWER:" in message.content[0].text


async def test_a_cached_answer_is_streamed_from_the_cache() -> None:
    async with make_rig() as rig:
        body = _solver_stream("What is 7 * 7?")
        url = f"{rig.ctx.base_url}/chat/completions"
        first = _text_times(await _events(url, body, rig.ctx.api_key))[1]
        again = await _events(url, body, rig.ctx.api_key)
        assert _text_times(again)[1] == first
        answers = [m for m in rig.trace if m["type"] == "GatewayAnswer"]
        assert [a["cached"] for a in answers] == [False, True]
        assert rig.router.stats()["total"]["cache_hits"] == 1
        stats = rig.session.stats("solver")
        assert stats.calls == 2
        assert stats.completion_tokens == 2 * answers[0]["completion_tokens"]


async def test_an_anthropic_upstream_streams_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Anthropic SDK backend streams the Messages events' text deltas on."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sim")
    async with make_rig(anthropic_upstream=True) as rig:
        events, _, answer = await _streamed_through_the_gateway(rig, "What is 6 * 8?")
        assert answer["model"].startswith("anthropic:")
        assert events[-1][1]["usage"]["completion_tokens"] == answer["completion_tokens"] > 0


async def test_a_retried_stream_sends_each_piece_once() -> None:
    """A retry after a partial stream re-sends nothing: only text beyond what went out."""
    from agentbus.gateway.streaming import pieces
    from agentbus.llm.streaming import TokenSink

    sent: list[str] = []

    class Sink(TokenSink):
        async def emit(self, piece: str) -> None:
            sent.append(piece)

    sink = Sink()
    sink.begin()
    for piece in ("ANSWER", ": 4"):  # the first attempt breaks off here
        await sink.text(piece)
    sink.begin()  # the retry streams the same deterministic answer from the start
    for piece in ("ANS", "WER: 4", "2\n"):
        await sink.text(piece)
    assert sent == ["ANSWER", ": 4", "2\n"] and sink.sent == "ANSWER: 42\n"
    text = "one two three four five six seven"
    assert "".join(pieces(text, 3)) == text and len(pieces(text, 3)) == 3
