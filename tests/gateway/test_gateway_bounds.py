"""What an agent sends is bounded and cannot reach past its episode (issue 40, items 3 and 5).

* a request body past the cap is refused with 413 and marks the episode (the
  agent then fails with the cap named), without reading the whole body;
* an episode's requests in flight are capped;
* ``/v1/responses``: remote MCP tools, another episode's
  ``previous_response_id``, ``conversation`` and ``store`` are refused unless
  the run allows them; ``store`` goes upstream as false; the upstream's body
  is scrubbed of secrets, streamed or not;
* the scorer decides when there is one or an answer (item 4).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import anyio
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from agentbus.gateway.limits import Limits
from agentbus.gateway.scorers import load_scorer, verdict
from agentbus.gateway.server import Gateway
from agentbus.gateway.session import Session
from tests.gateway.test_gateway import make_rig
from tests.helpers.stub_http import serving

CANARY = "sk-canary-40b7e1"


@asynccontextmanager
async def upstream(seen: list[dict[str, Any]]) -> AsyncIterator[str]:
    """A stand-in OpenAI-style upstream whose answers echo the key it was sent."""

    async def responses(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append(body)
        key = request.headers.get("Authorization", "")
        if body.get("stream"):
            stream = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await stream.prepare(request)
            text = f'data: {{"type": "response.output_text.delta", "delta": "{key}"}}\n\n'
            for i in range(0, len(text), 7):  # the key split across chunks
                await stream.write(text[i : i + 7].encode())
            await stream.write_eof()
            return stream
        return web.json_response(
            {"id": f"resp_{len(seen)}", "object": "response", "output_text": f"echo {key}"}
        )

    app = web.Application()
    app.router.add_post("/v1/responses", responses)
    async with serving(app) as url:
        yield f"vllm:{url}/v1#m1"


async def test_responses_refuses_what_reaches_past_the_episode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VLLM_API_KEY", CANARY)
    seen: list[dict[str, Any]] = []
    async with upstream(seen) as spec, make_rig() as rig:
        rig.session.slots["solver"] = (spec, rig.router.client(spec))
        url = f"{rig.ctx.base_url}/responses"
        headers = {"Authorization": f"Bearer {rig.ctx.api_key}"}
        async with aiohttp.ClientSession(headers=headers) as http:

            async def post(**body: Any) -> tuple[int, str]:
                async with http.post(url, json={"model": "solver", **body}) as r:
                    return r.status, await r.text()

            mcp = {"type": "mcp", "server_label": "x", "server_url": "https://evil.example"}
            for body, word in (
                ({"tools": [mcp]}, "remote MCP"),
                ({"tools": [{"type": "function", "server_url": "https://e"}]}, "remote MCP"),
                ({"previous_response_id": "resp_of_someone_else"}, "not a response of this"),
                ({"conversation": "conv_1"}, "conversation"),
                ({"store": True}, "store=true"),
            ):
                status, text = await post(input="x", **body)
                assert status == 400 and word in text, (body, text)
            assert seen == []  # nothing refused went upstream
            status, text = await post(input="ping")
            assert status == 200 and CANARY not in text and "echo" in text
            assert seen[-1]["store"] is False
            status, text = await post(input="again", previous_response_id="resp_1")
            assert status == 200  # this episode's own earlier response
            status, text = await post(input="s", stream=True)
            assert status == 200 and "delta" in text and CANARY not in text
        rig.gateway.responses_remote = True
        async with aiohttp.ClientSession(headers=headers) as http:
            async with http.post(url, json={"model": "solver", "input": "x", "store": True}) as r:
                assert r.status == 200
        assert seen[-1]["store"] is True


async def test_body_cap_refuses_and_marks_the_episode() -> None:
    gateway = Gateway(limits=Limits(body_bytes=1024 * 1024))
    await gateway.start()
    session = Session(episode_id="e", task_id="t", slots={}, off=frozenset())
    ctx = gateway.open(session)
    headers = {"Authorization": f"Bearer {ctx.api_key}"}
    big = {"model": "solver", "messages": [{"role": "user", "content": "x" * (2 << 20)}]}
    try:
        async with aiohttp.ClientSession(headers=headers) as http:
            async with http.post(f"{ctx.base_url}/chat/completions", json=big) as r:
                assert r.status == 413
                assert "cap of 1 MiB (--gateway-body-mb)" in await r.text()
            small = {"model": "solver", "messages": [{"role": "user", "content": "hi"}]}
            async with http.post(f"{ctx.base_url}/chat/completions", json=small) as r:
                assert r.status == 404  # read and routed: no such module here
    finally:
        await gateway.stop()
    assert session.violation is not None and "cap of 1 MiB" in session.violation


async def test_requests_in_flight_per_episode_are_capped() -> None:
    gate = Limits(per_episode=2)
    release: list[Any] = []

    class Fake:
        def __init__(self, token: str) -> None:
            self.token, self.violation = token, None

    session = Fake("t")

    class Finder:
        def _session(self, request: web.Request) -> Any:
            return session

    middleware = gate.middleware(Finder())
    event = anyio.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        release.append(1)
        await event.wait()
        return web.Response(text="ok")

    statuses: list[int] = []

    async def one() -> None:
        request = make_mocked_request("POST", "/v1/chat/completions")
        statuses.append((await middleware(request, slow)).status)

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(one)
        for _ in range(500):  # two held, one answered 429
            if len(release) + len(statuses) == 3:
                break
            await anyio.sleep(0.01)
        event.set()
    assert sorted(statuses) == [200, 200, 429]


def test_the_agent_cannot_score_itself() -> None:
    claim = {"answer": "definitely wrong", "reward": 1, "success": True}
    task = {"id": "t", "answer": "42"}
    assert verdict(claim, task, load_scorer("numeric"))[:2] == (0.0, False)
    assert verdict(claim, task, None)[:2] == (0.0, False)  # the answer decides (exact)
    assert verdict(claim, {"id": "t"}, None) == (1.0, True, "result")  # nothing else to go by
    assert verdict(claim, task, load_scorer("result")) == (1.0, True, "result")
    assert verdict({"answer": "42"}, task, load_scorer("result"))[:2] == (0.0, False)
