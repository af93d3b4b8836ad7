"""The module gateway against the real simulator through the router, with the official SDKs.

Each test starts the simulator (HTTP on loopback, speed 0), a router and a
gateway, opens one episode session and talks to it with ``openai`` and
``anthropic`` clients exactly as a user's agent would.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import aiohttp
import anthropic
import openai
import pytest

from agentbus.core.environment import Task
from agentbus.gateway.server import Gateway
from agentbus.gateway.session import Session
from tests.helpers.gateway_rig import Rig, open_rig
from tests.helpers.stub_http import serving

TASK = Task(id="t-1", env="external", instruction="What is 6 * 7?", hidden={"answer": "42"})


def make_rig() -> AbstractAsyncContextManager[Rig]:
    """A planner on sim:weak and a solver on sim:strong; the critic is off."""
    return open_rig(
        TASK,
        {"planner": "sim:weak", "solver": "sim:strong"},
        episode_id="ep-1",
        off={"critic"},
        all_slots=("planner", "solver", "critic"),
    )


def _ask(module: str, text: str = "What is 6 * 7?") -> dict[str, Any]:
    return {"model": module, "messages": [{"role": "user", "content": text}]}


async def test_openai_chat_maps_module_to_slot_model() -> None:
    async with make_rig() as rig:
        reply = await rig.ctx.openai.chat.completions.create(**_ask("solver"))
        text = reply.choices[0].message.content
        assert reply.model == "solver"  # the module name, not the model behind it
        assert "ANSWER:" in text
        assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
        kinds = [(m["type"], m.get("module"), m.get("model")) for m in rig.trace]
        assert kinds == [
            ("GatewayRequest", "solver", "sim:strong"),
            ("GatewayAnswer", "solver", "sim:strong"),
        ]
        assert rig.trace[1]["text"] == text
        assert rig.session.modules["solver"].calls == 1


async def test_openai_stream_gives_the_same_answer() -> None:
    async with make_rig() as rig:
        plain = await rig.ctx.openai.chat.completions.create(**_ask("planner"))
        stream = await rig.ctx.openai.chat.completions.create(
            **_ask("planner"), stream=True, stream_options={"include_usage": True}
        )
        pieces, usage = [], None
        async for chunk in stream:
            if chunk.choices:
                pieces.append(chunk.choices[0].delta.content or "")
            if chunk.usage is not None:
                usage = chunk.usage
        assert "".join(pieces) == plain.choices[0].message.content
        assert usage is not None and usage.completion_tokens == plain.usage.completion_tokens


async def test_anthropic_messages_and_stream() -> None:
    async with make_rig() as rig:
        message = await rig.ctx.anthropic.messages.create(
            model="solver", max_tokens=300, messages=[{"role": "user", "content": "What is 6 * 7?"}]
        )
        text = message.content[0].text
        assert "ANSWER:" in text and message.stop_reason == "end_turn"
        async with rig.ctx.anthropic.messages.stream(
            model="solver", max_tokens=300, messages=[{"role": "user", "content": "What is 6 * 7?"}]
        ) as stream:
            streamed = await stream.get_final_text()
        assert streamed == text


async def test_unknown_and_expired_tokens_are_refused() -> None:
    async with make_rig() as rig:
        stranger = openai.AsyncOpenAI(
            base_url=rig.ctx.base_url, api_key="not-a-token", max_retries=0
        )
        with pytest.raises(openai.AuthenticationError, match="unknown or expired episode token"):
            await stranger.chat.completions.create(**_ask("solver"))
        await stranger.close()
        rig.gateway.close(rig.session)  # the episode ended
        with pytest.raises(openai.AuthenticationError):
            await rig.ctx.openai.chat.completions.create(**_ask("solver"))
        with pytest.raises(anthropic.AuthenticationError):
            await rig.ctx.anthropic.messages.create(
                model="solver", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )


async def test_another_episodes_base_url_refuses_the_token() -> None:
    async with make_rig() as rig:
        other = Session(episode_id="ep-2", task_id=TASK.id, slots={}, off=frozenset())
        other_ctx = rig.gateway.open(other)
        wrong = openai.AsyncOpenAI(
            base_url=other_ctx.base_url, api_key=rig.ctx.api_key, max_retries=0
        )
        with pytest.raises(openai.AuthenticationError):
            await wrong.chat.completions.create(**_ask("solver"))
        await wrong.close()


async def test_off_and_unmapped_modules_are_refused_with_a_message() -> None:
    async with make_rig() as rig:
        with pytest.raises(openai.PermissionDeniedError, match="switched off"):
            await rig.ctx.openai.chat.completions.create(**_ask("critic"))
        with pytest.raises(openai.NotFoundError, match="names no module of this run"):
            await rig.ctx.openai.chat.completions.create(**_ask("summarizer"))
        summary = rig.session.summary()
        assert summary["refused"] == {"critic": 1, "summarizer": 1}
        refusals = [m for m in rig.trace if m["type"] == "GatewayAnswer"]
        assert [m["module"] for m in refusals] == ["critic", "summarizer"]
        assert all(m["error"] for m in refusals)


async def test_unmapped_module_goes_to_the_fallback_model() -> None:
    async with make_rig() as rig:
        rig.session.fallback = ("sim:strong", rig.router.client("sim:strong"))
        reply = await rig.ctx.openai.chat.completions.create(**_ask("summarizer"))
        assert reply.choices[0].message.content
        assert rig.session.summary()["unmapped"] == ["summarizer"]
        with pytest.raises(openai.PermissionDeniedError):  # off stays off
            await rig.ctx.openai.chat.completions.create(**_ask("critic"))


async def test_models_and_responses_endpoints() -> None:
    async with make_rig() as rig:
        models = await rig.ctx.openai.models.list()
        assert [m.id for m in models.data] == ["planner", "solver"]
        headers = {"Authorization": f"Bearer {rig.ctx.api_key}"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"{rig.ctx.base_url}/responses", json={"model": "solver"}, headers=headers
            ) as r,
        ):
            assert r.status == 501
            assert "chat completions" in (await r.json())["error"]["message"]


async def test_bad_requests_are_one_clear_error() -> None:
    async with make_rig() as rig:
        headers = {"Authorization": f"Bearer {rig.ctx.api_key}"}
        async with aiohttp.ClientSession() as http:
            async with http.post(
                f"{rig.ctx.base_url}/chat/completions", data=b"{not json", headers=headers
            ) as r:
                assert r.status == 400
            async with http.post(
                f"{rig.ctx.base_url}/chat/completions", json={"messages": []}, headers=headers
            ) as r:
                assert r.status == 400
                assert "'model' is required" in (await r.json())["error"]["message"]


async def test_gateway_refuses_a_non_loopback_host() -> None:
    from agentbus.core.errors import UserError

    with pytest.raises(UserError, match="loopback"):
        Gateway(host="0.0.0.0")


async def test_responses_api_passes_through_to_an_upstream_that_has_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A vLLM-style upstream with /v1/responses (a stand-in server): the call goes there
    with the upstream's model name and key; the agent gets the answer, never the key."""
    from aiohttp import web

    seen: list[tuple[str, dict[str, Any]]] = []

    async def responses(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.headers.get("Authorization", ""), body))
        if body.get("input") == "fail":
            return web.json_response({"error": {"message": "bad key sk-canary-9d2f"}}, status=401)
        return web.json_response(
            {
                "id": "resp_1",
                "object": "response",
                "model": body["model"],
                "output": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "pong", "annotations": []}],
                    }
                ],
                "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
            }
        )

    app = web.Application()
    app.router.add_post("/v1/responses", responses)
    monkeypatch.setenv("VLLM_API_KEY", "sk-canary-9d2f")
    async with serving(app) as url, make_rig() as rig:
        spec = f"vllm:{url}/v1#m1"
        rig.session.slots["solver"] = (spec, rig.router.client(spec))
        reply = await rig.ctx.openai.responses.create(model="solver", input="ping")
        assert reply.output_text == "pong"
        assert seen[0] == (
            "Bearer sk-canary-9d2f",
            {"model": "m1", "input": "ping", "store": False},
        )
        assert rig.session.modules["solver"].prompt_tokens == 3
        with pytest.raises(openai.AuthenticationError) as failed:
            await rig.ctx.openai.responses.create(model="solver", input="fail")
        assert "canary" not in str(failed.value.body)
        with pytest.raises(openai.APIStatusError, match="no Responses API"):
            await rig.ctx.openai.responses.create(model="planner", input="ping")
        assert [m["type"] for m in rig.trace][:2] == ["GatewayRequest", "GatewayAnswer"]
