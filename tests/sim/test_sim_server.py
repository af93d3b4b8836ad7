"""The simulator's HTTP routes on loopback, through the official openai and anthropic SDKs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import anthropic
import anyio
import openai
import pytest
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI

from agentbus.core.errors import UserError
from agentbus.sim.config import SimConfig
from agentbus.sim.faults import FaultConfig
from agentbus.sim.service import SimHandle, sim_service

SYSTEM = "You are the planning module of an LLM agent."


@pytest.fixture
async def sim() -> AsyncIterator[SimHandle]:
    async with sim_service(SimConfig(speed=0, experts=[])) as handle:
        yield handle


async def test_chat_completion_non_stream(sim: SimHandle) -> None:
    assert sim.base_url is not None and sim.base_url.startswith("http://127.0.0.1:")
    client = AsyncOpenAI(base_url=sim.base_url, api_key="sim")
    messages: list[Any] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "## Task\nx"},
    ]
    r = await client.chat.completions.create(
        model="strong",
        messages=messages,
        temperature=0,
    )
    assert r.object == "chat.completion" and r.model == "strong"
    choice = r.choices[0]
    assert choice.message.role == "assistant" and choice.finish_reason == "stop"
    assert choice.message.content and choice.message.content.startswith("1.")  # a plan
    assert r.usage is not None and r.usage.prompt_tokens > 0
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    # deterministic at temperature 0: same text through the in-process path too
    same = await sim.transport.complete("strong", messages)
    assert same.text == choice.message.content
    await client.close()


async def test_chat_completion_stream_with_usage(sim: SimHandle) -> None:
    client = AsyncOpenAI(base_url=sim.base_url, api_key="sim")
    stream = await client.chat.completions.create(
        model="weak",
        messages=[{"role": "user", "content": "hello"}],
        temperature=0,
        max_tokens=20,
        stream=True,
        stream_options={"include_usage": True},
    )
    text, finish, usage = [], None, None
    async for chunk in stream:
        assert chunk.object == "chat.completion.chunk"
        if chunk.choices:
            text.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
        if chunk.usage:
            usage = chunk.usage
    whole = "".join(text)
    assert finish == "length" and 0 < len(whole) <= 80
    assert usage is not None and usage.completion_tokens == -(-len(whole) // 4)
    direct = await client.chat.completions.create(
        model="weak", messages=[{"role": "user", "content": "hello"}], temperature=0, max_tokens=20
    )
    assert direct.choices[0].message.content == whole
    await client.close()


async def test_text_completions_and_models(sim: SimHandle) -> None:
    client = AsyncOpenAI(base_url=sim.base_url, api_key="sim")
    r = await client.completions.create(model="weak", prompt="Say hi", temperature=0)
    assert r.object == "text_completion" and r.choices[0].text
    assert r.usage is not None and r.usage.completion_tokens > 0
    pieces = [
        c.choices[0].text
        async for c in await client.completions.create(
            model="weak", prompt="Say hi", temperature=0, stream=True
        )
        if c.choices
    ]
    assert "".join(pieces) == r.choices[0].text
    models = [m.id async for m in client.models.list()]
    assert {"weak", "strong", "strong-planning", "strong-action"} <= set(models)
    await client.close()


async def test_anthropic_messages(sim: SimHandle) -> None:
    client = AsyncAnthropic(base_url=sim.root_url, api_key="sim")
    msg = await client.messages.create(
        model="strong",
        max_tokens=200,
        system="You are the action module of an LLM agent.",
        messages=[{"role": "user", "content": [{"type": "text", "text": "## Task\ngo"}]}],
        extra_body={"temperature": 0},  # this SDK version has no temperature parameter
    )
    assert msg.type == "message" and msg.role == "assistant"
    assert msg.content[0].type == "text" and msg.content[0].text.startswith("```action")
    assert msg.stop_reason == "end_turn"
    assert msg.usage.input_tokens > 0 and msg.usage.output_tokens > 0
    async with client.messages.stream(
        model="strong",
        max_tokens=200,
        system="You are the action module of an LLM agent.",
        messages=[{"role": "user", "content": "## Task\ngo"}],
        extra_body={"temperature": 0},
    ) as stream:
        streamed = await stream.get_final_message()
    assert streamed.content[0].text == msg.content[0].text  # type: ignore[union-attr]
    assert streamed.usage.output_tokens == msg.usage.output_tokens
    cut = await client.messages.create(
        model="weak", max_tokens=2, messages=[{"role": "user", "content": "hello"}]
    )
    assert cut.stop_reason == "max_tokens"
    await client.close()


async def test_errors_have_the_protocol_shapes(sim: SimHandle) -> None:
    oa = AsyncOpenAI(base_url=sim.base_url, api_key="sim", max_retries=0)
    with pytest.raises(openai.NotFoundError) as nf:
        await oa.chat.completions.create(model="gpt-9", messages=[{"role": "user", "content": "x"}])
    assert "known: strong" in str(nf.value)
    assert nf.value.body["code"] == "model_not_found"  # type: ignore[index]
    an = AsyncAnthropic(base_url=sim.root_url, api_key="sim", max_retries=0)
    with pytest.raises(anthropic.NotFoundError):
        await an.messages.create(
            model="gpt-9", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{sim.base_url}/chat/completions", data=b"{not json") as r:
            assert r.status == 400
            assert (await r.json())["error"]["type"] == "invalid_request_error"
        async with http.post(f"{sim.base_url}/messages", json={"model": "weak"}) as r:
            body = await r.json()
            assert r.status == 400 and body["type"] == "error"
            assert body["error"]["type"] == "invalid_request_error"
            assert "max_tokens" in body["error"]["message"]
        async with http.get(f"{sim.root_url}/health") as r:
            assert (await r.json()) == {"status": "ok"}
        async with http.get(f"{sim.base_url}/nothing-here") as r:
            assert r.status == 404 and "nothing-here" in (await r.json())["error"]["message"]
        async with http.get(f"{sim.base_url}/chat/completions") as r:
            assert r.status == 405 and (await r.json())["error"]["type"]
    await oa.close()
    await an.close()


async def test_injected_faults_over_http() -> None:
    faults = FaultConfig(rate_429=1.0, retry_after_s=0.5)
    async with sim_service(SimConfig(speed=0, experts=[], faults=faults)) as sim:
        async with aiohttp.ClientSession() as http:
            body = {"model": "weak", "messages": [{"role": "user", "content": "x"}]}
            async with http.post(f"{sim.base_url}/chat/completions", json=body) as r:
                assert r.status == 429
                assert r.headers["Retry-After"] == "0.5"
                assert r.headers["retry-after-ms"] == "500"
                assert (await r.json())["error"]["code"] == "rate_limit_exceeded"
        oa = AsyncOpenAI(base_url=sim.base_url, api_key="sim", max_retries=0)
        with pytest.raises(openai.RateLimitError):
            await oa.chat.completions.create(
                model="weak", messages=[{"role": "user", "content": "x"}]
            )
        await oa.close()
    for kind, error in (("rate_500", openai.InternalServerError), ("rate_drop", None)):
        config = SimConfig(speed=0, experts=[], faults=FaultConfig(**{kind: 1.0}))
        async with sim_service(config) as sim:
            oa = AsyncOpenAI(base_url=sim.base_url, api_key="sim", max_retries=0)
            for stream in (False, True):
                with pytest.raises(error or openai.APIConnectionError):
                    resp = await oa.chat.completions.create(
                        model="weak", messages=[{"role": "user", "content": "x"}], stream=stream
                    )
                    if isinstance(resp, openai.AsyncStream):
                        async for _ in resp:
                            pass
            await oa.close()
            by_status = sim.metrics()["requests_by_status"]
            assert by_status == ({"500": 2} if kind == "rate_500" else {"dropped": 2})


async def test_metrics_count_concurrent_requests() -> None:
    config = SimConfig(speed=20, max_num_seqs=16, experts=[])
    async with sim_service(config) as sim:
        client = AsyncOpenAI(base_url=sim.base_url, api_key="sim")

        async def one(i: int) -> None:
            await client.chat.completions.create(
                model="weak", messages=[{"role": "user", "content": f"q{i}"}], max_tokens=30
            )

        async with anyio.create_task_group() as tg:
            for i in range(120):
                tg.start_soon(one, i)
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{sim.root_url}/metrics.json") as r:
                m = await r.json()
        await client.close()
    assert m["requests_received"] == 120 and m["requests_served"] == 120
    assert m["in_flight"] == 0 and m["max_in_flight"] > 16
    assert m["max_running"] == 16 and m["max_queue_length"] > 0 and m["queue_length"] == 0
    assert m["capacity_tokens_per_s"] == pytest.approx(sim.capacity_tokens_per_s, abs=0.1)
    assert m["completion_tokens"] > 120 and m["prompt_tokens"] > 120


async def test_a_client_leaving_mid_stream_is_counted_not_crashed() -> None:
    async with sim_service(SimConfig(speed=2, experts=[])) as sim:
        async with aiohttp.ClientSession() as http:
            body = {"model": "weak", "stream": True, "messages": [{"role": "user", "content": "x"}]}
            async with http.post(f"{sim.base_url}/chat/completions", json=body) as r:
                assert (await r.content.readline()).startswith(b"data: {")
        for _ in range(100):  # the server notices at its next write
            if not sim.metrics()["in_flight"]:
                break
            await anyio.sleep(0.05)
        assert sim.metrics()["requests_by_status"] == {"disconnected": 1}


class BrokenExpert:
    """An expert with a bug: the server must answer 500 JSON, not hang or crash."""

    env = "broken"

    def add_tasks(self, tasks: Any) -> None:
        return None

    def find_task(self, messages: Any) -> Any:
        raise RuntimeError("expert bug")

    def assess(self, query: Any) -> Any:
        raise AssertionError

    def respond(self, query: Any, verdict: Any, rng: Any) -> str:
        raise AssertionError


async def test_an_expert_bug_becomes_a_500_json_answer() -> None:
    from agentbus.sim.model import SimModel

    model = SimModel(experts=[BrokenExpert()])
    async with sim_service(SimConfig(speed=0), model) as sim:
        oa = AsyncOpenAI(base_url=sim.base_url, api_key="sim", max_retries=0)
        with pytest.raises(openai.InternalServerError, match="expert bug"):
            await oa.chat.completions.create(
                model="weak", messages=[{"role": "user", "content": "x"}]
            )
        await oa.close()
        assert sim.metrics()["requests_by_status"] == {"error": 1}
        with pytest.raises(RuntimeError, match="expert bug"):  # in process: the bug itself
            await sim.transport.complete("weak", [{"role": "user", "content": "x"}])


async def test_a_busy_port_is_a_user_error() -> None:
    async with sim_service(SimConfig(speed=0, experts=[])) as first:
        with pytest.raises(UserError, match=f"cannot listen on 127.0.0.1:{first.port}"):
            async with sim_service(SimConfig(speed=0, experts=[], port=first.port)):
                pass
