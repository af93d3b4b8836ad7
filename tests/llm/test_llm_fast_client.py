"""The lean OpenAI-compatible client of ``vllm:`` (issue 53) against the real simulator.

It must answer exactly as the official SDK does for the same request, and
classify failures the same way (the router retries on the kind), while
leaving streamed calls to the SDK.
"""

from __future__ import annotations

import socket

import pytest

from agentbus.llm.backends.base import BackendContext
from agentbus.llm.backends.openai_backend import VLLMBackend
from agentbus.llm.config import EndpointLimits
from agentbus.llm.retry import UpstreamError
from agentbus.llm.spec import parse_spec
from agentbus.llm.types import SamplingParams
from agentbus.sim.config import SimConfig
from agentbus.sim.faults import FaultConfig
from agentbus.sim.service import sim_service

MESSAGES = [
    {"role": "system", "content": "You are the reasoning module of an agent."},
    {"role": "user", "content": "What is 2 + 3? Think step by step."},
]


def _backend(url: str, http_client: str = "aiohttp") -> VLLMBackend:
    spec = parse_spec(f"vllm:{url}#weak")
    return VLLMBackend(
        spec, url, EndpointLimits(read_timeout=5.0), BackendContext(http_client=http_client)
    )


async def test_lean_client_answers_as_the_sdk_does() -> None:
    params = SamplingParams(max_tokens=40, stop=("\n\n",), extra={"top_k": 5})
    async with sim_service(SimConfig(speed=0, experts=[])) as sim:
        assert sim.base_url
        lean, sdk = _backend(sim.base_url), _backend(sim.base_url, "httpx")
        assert lean._fast is not None and sdk._fast is None
        try:
            a = await lean.complete(MESSAGES, params)
            b = await sdk.complete(MESSAGES, params)
            c = await lean.complete(MESSAGES, params)  # a prefix-cache hit now, as b was
        finally:
            await lean.aclose()
            await sdk.aclose()
    keep = ("text", "model", "prompt_tokens", "completion_tokens", "finish_reason")
    assert a.model_dump(include=set(keep)) == b.model_dump(include=set(keep))
    assert a.text and a.completion_tokens <= 40
    assert c.cached_prompt_tokens == b.cached_prompt_tokens > 0


@pytest.mark.parametrize(
    ("faults", "kind", "status"),
    [
        (FaultConfig(rate_429=1.0, retry_after_s=2.0), "rate_limit", 429),
        (FaultConfig(rate_500=1.0), "server", 500),
        (FaultConfig(context_window=8), "context_overflow", 400),
        (FaultConfig(rate_drop=1.0), "connection", None),
    ],
)
async def test_failures_are_classified_as_with_the_sdk(
    faults: FaultConfig, kind: str, status: int | None
) -> None:
    async with sim_service(SimConfig(speed=0, experts=[], faults=faults)) as sim:
        assert sim.base_url
        found: list[UpstreamError] = []
        for http_client in ("aiohttp", "httpx"):
            backend = _backend(sim.base_url, http_client)
            try:
                with pytest.raises(UpstreamError) as err:
                    await backend.complete(MESSAGES, SamplingParams(max_tokens=16))
                found.append(err.value)
            finally:
                await backend.aclose()
    lean, sdk = found
    assert (lean.kind, lean.status) == (sdk.kind, sdk.status)
    assert lean.kind == kind and lean.status == status
    assert lean.retry_after == sdk.retry_after
    if kind == "rate_limit":
        assert lean.retry_after == 2.0


async def test_refused_connection_is_a_connection_failure() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = _backend(f"http://127.0.0.1:{port}/v1")
    try:
        with pytest.raises(UpstreamError) as err:
            await backend.complete(MESSAGES, SamplingParams(max_tokens=8))
    finally:
        await backend.aclose()
    assert err.value.kind == "connection"
    assert "ConnectionRefusedError" in str(err.value)
