"""Every backend against the real simulator on loopback, through the official SDKs.

openai and vllm specs go through ``AsyncOpenAI`` to the simulator's
``/v1/chat/completions``; anthropic through ``AsyncAnthropic`` to its
``/v1/messages``; ``sim:`` over HTTP (the default) and in process. At
temperature 0 the simulator's answer is a function of the prompt it receives,
so equal answers across paths show that each backend delivered the same
prompt (system text, roles, merged turns).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar

import pytest

from agentbus.core import registry
from agentbus.core.errors import InfraError, UserError
from agentbus.llm.backends.anthropic_backend import to_messages_api
from agentbus.llm.backends.base import Backend
from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.router import LLMRouter
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from agentbus.sim.config import SimConfig
from agentbus.sim.service import SimHandle, sim_service

SECRET = "sk-test-DO-NOT-LEAK-1234567890"

SYSTEM = "You are the planning module of an LLM agent. Answer with numbered steps."
MSGS: list[ChatMessage] = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "## Task\nReach the number 12 from 3."},
]


@pytest.fixture
async def sim() -> AsyncIterator[SimHandle]:
    async with sim_service(SimConfig(speed=0, experts=[])) as handle:
        yield handle


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)


def received(sim: SimHandle) -> int:
    return int(sim.metrics()["requests_received"])


async def reference(sim: SimHandle, messages: Sequence[ChatMessage]) -> Completion:
    """The simulator's answer to exactly these messages, asked in process."""
    return await sim.transport.complete("weak", messages, SamplingParams())


async def test_openai_backend_through_asyncopenai(sim: SimHandle, keys: None) -> None:
    async with LLMRouter(LLMConfig(), sim=sim) as router:
        llm = router.client(f"openai:{sim.base_url}#weak")
        result = await llm.complete(MSGS, SamplingParams(max_tokens=300))
    expected = await reference(sim, MSGS)
    assert result.text == expected.text and result.text
    assert result.prompt_tokens == expected.prompt_tokens > 0
    assert result.completion_tokens > 0 and result.latency_s > 0
    assert result.model == "weak" and not result.cached
    assert received(sim) == 2  # ours over HTTP + the in-process reference


async def test_vllm_backend_sends_extra_body(sim: SimHandle) -> None:
    async with LLMRouter(LLMConfig(), sim=sim) as router:
        llm = router.client(f"vllm:{sim.base_url}#weak")
        params = SamplingParams(extra={"top_k": 20, "repetition_penalty": 1.1})
        result = await llm.complete(MSGS, params)
        assert result.text == (await reference(sim, MSGS)).text
        stats = router.stats()["models"][f"vllm:{sim.base_url}#weak"]
        assert stats["sent"] == 1 and stats["prompt_tokens"] == result.prompt_tokens


def test_openai_drops_vllm_only_options_and_vllm_keeps_them(keys: None) -> None:
    from agentbus.llm.backends.base import BackendContext
    from agentbus.llm.backends.openai_backend import OpenAIBackend, VLLMBackend
    from agentbus.llm.spec import parse_spec

    params = SamplingParams(seed=3, stop=("END",), extra={"top_k": 5, "logprobs": True})
    ctx = BackendContext()
    oa = OpenAIBackend(parse_spec("openai:gpt-4o-mini"), None, EndpointLimits(), ctx)
    vl = VLLMBackend(parse_spec("vllm:http://h:1/v1#m"), "http://h:1/v1", EndpointLimits(), ctx)
    o, v = oa.request_options(params), vl.request_options(params)
    assert o["extra_body"] == {"logprobs": True} and o["max_completion_tokens"] == 512
    assert v["extra_body"] == {"top_k": 5, "logprobs": True} and v["max_tokens"] == 512
    assert o["seed"] == v["seed"] == 3 and o["stop"] == ["END"]


def test_messages_api_mapping() -> None:
    system, turns = to_messages_api(
        [
            {"role": "system", "content": "A"},
            {"role": "user", "content": "u1"},
            {"role": "user", "content": "u2"},
            {"role": "system", "content": "B"},
            {"role": "assistant", "content": "a1"},
            {"role": "assistant", "content": "a2"},
            {"role": "user", "content": "u3"},
        ]
    )
    assert system == "A\n\nB"
    assert turns == [
        {"role": "user", "content": "u1\n\nu2"},
        {"role": "assistant", "content": "a1\n\na2"},
        {"role": "user", "content": "u3"},
    ]


async def test_anthropic_backend_through_the_anthropic_sdk(sim: SimHandle, keys: None) -> None:
    split: list[ChatMessage] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "## Task\nReach the number 12 from 3."},
        {"role": "user", "content": "Be brief."},
    ]
    merged: list[ChatMessage] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "## Task\nReach the number 12 from 3.\n\nBe brief."},
    ]
    async with LLMRouter(LLMConfig(), sim=sim) as router:
        llm = router.client(f"anthropic:{sim.base_url}#weak")
        result = await llm.complete(split, SamplingParams(max_tokens=400))
    expected = await reference(sim, merged)
    # the simulator detected the planning role from system=, and saw the merged turn
    assert result.text == expected.text
    assert result.prompt_tokens == expected.prompt_tokens
    assert result.completion_tokens > 0 and result.finish_reason in ("stop", "length")


async def test_sim_backend_http_and_inproc_agree(sim: SimHandle) -> None:
    async with LLMRouter(LLMConfig(), sim=sim) as http_router:
        via_http = await http_router.client("sim:weak").complete(MSGS)
        assert (
            "at http://127.0.0.1"
            in http_router.stats()["models"]["sim:weak"]["replicas"][0]["endpoint"]
        )
    before = received(sim)
    async with LLMRouter(LLMConfig(sim_transport="inprocess"), sim=sim) as inproc_router:
        via_inproc = await inproc_router.client("sim:weak").complete(MSGS)
        assert (
            "in process" in inproc_router.stats()["models"]["sim:weak"]["replicas"][0]["endpoint"]
        )
    assert via_http.text == via_inproc.text
    assert via_http.prompt_tokens == via_inproc.prompt_tokens
    assert received(sim) == before + 1


async def test_sim_without_a_simulator_is_a_user_error() -> None:
    async with LLMRouter(LLMConfig()) as router:
        with pytest.raises(UserError, match="needs the simulator"):
            router.client("sim:weak")


async def test_unknown_sim_profile(sim: SimHandle) -> None:
    async with LLMRouter(LLMConfig(), sim=sim) as router:
        with pytest.raises(InfraError, match=r"HTTP 404.*not retried"):
            await router.client("sim:nosuchmodel").complete(MSGS)
    async with LLMRouter(LLMConfig(sim_transport="inprocess"), sim=sim) as router:
        with pytest.raises(UserError):
            await router.client("sim:nosuchmodel").complete(MSGS)


async def test_missing_api_keys_are_user_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    async with LLMRouter() as router:
        with pytest.raises(UserError, match="needs the OPENAI_API_KEY environment variable"):
            router.client("openai:gpt-4o-mini")
        with pytest.raises(UserError, match="needs the ANTHROPIC_API_KEY environment variable"):
            router.client("anthropic:claude-3-5-sonnet-latest")


def test_credentials_in_a_url_are_refused_without_echoing_them() -> None:
    with pytest.raises(UserError) as info:
        LLMRouter().client(f"vllm:http://user:{SECRET}@127.0.0.1:9/v1#m")
    assert "credentials" in str(info.value) and SECRET not in str(info.value)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_unreachable_server_is_one_clear_infra_error(keys: None) -> None:
    port = _closed_port()
    fast = EndpointLimits(max_retries=2, backoff_base=0.01, backoff_max=0.02, connect_timeout=2)
    async with LLMRouter(LLMConfig(limits=fast)) as router:
        for spec in (
            f"vllm:http://127.0.0.1:{port}/v1#m",
            f"openai:http://127.0.0.1:{port}/v1#m",
            f"anthropic:http://127.0.0.1:{port}#m",
        ):
            llm = router.client(spec)
            with pytest.raises(InfraError) as info:
                await llm.complete(MSGS)
            message = str(info.value)
            assert f"127.0.0.1:{port}" in message
            assert "connection failed" in message and "gave up after 3 attempts" in message
            assert "\n" not in message
            assert SECRET not in message and SECRET not in repr(llm)
        stats = router.stats()
        assert stats["total"]["errors"] == 3 and stats["total"]["retries"] == 6
        assert SECRET not in repr(stats)


class EchoBackend(Backend):
    """A third-party backend: it registers by name and the router uses it like ours."""

    name: ClassVar[str] = "echo"

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        return Completion(text=messages[-1]["content"].upper(), model=self.spec.model)


async def test_third_party_backend_by_registry() -> None:
    registry.register("backends", "echo", EchoBackend)
    try:
        async with LLMRouter() as router:
            llm = router.client("echo:loud")
            assert router.client("echo:loud") is llm  # one client per model for the run
            result: Any = await llm.complete([{"role": "user", "content": "hi"}])
            assert result.text == "HI"
            assert (await llm.complete([{"role": "user", "content": "hi"}])).cached
    finally:
        registry.unregister("backends", "echo")


async def test_httpx_transport_works_too(sim: SimHandle) -> None:
    async with LLMRouter(LLMConfig(http_client="httpx"), sim=sim) as router:
        result = await router.client("sim:weak").complete(MSGS)
    assert result.text == (await reference(sim, MSGS)).text


def test_anthropic_sampling_only_goes_to_compatible_servers(keys: None) -> None:
    from agentbus.llm.backends.anthropic_backend import AnthropicBackend
    from agentbus.llm.backends.base import BackendContext
    from agentbus.llm.spec import parse_spec

    params = SamplingParams(temperature=0.0, top_p=0.9, stop=("END",))
    ctx = BackendContext()
    official = AnthropicBackend(parse_spec("anthropic:claude-x"), None, EndpointLimits(), ctx)
    compat = AnthropicBackend(
        parse_spec("anthropic:http://h:1#m"), "http://h:1", EndpointLimits(), ctx
    )
    o = official.request_options(MSGS, params)
    c = compat.request_options(MSGS, params)
    # the system prompt is the shared prefix: one text block marked for prompt caching
    assert o["system"] == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    assert o["stop_sequences"] == ["END"] and "extra_body" not in o
    assert c["extra_body"] == {"temperature": 0.0, "top_p": 0.9}
    assert o["messages"] == c["messages"] == [{"role": "user", "content": MSGS[1]["content"]}]
