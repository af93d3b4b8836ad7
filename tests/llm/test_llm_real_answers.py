"""What real servers send back, handled and counted right (issue 34).

Against the simulator's real HTTP server playing the behaviours of real
servers (agentbus/sim/behaviours.py): a context-window 400 in each server's
words is the agent's failure, never retried and never infrastructure; an
answer cut at max tokens reports ``finish_reason: length``; the output cap
goes out under the name each server honours; a function call returned as
text is read for every backend; waiting for a model slot does not count
against the episode's timeout.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import anyio
import pytest

from agentbus.core.actor import Actor, on
from agentbus.core.demo import CountdownEnvironment, demo_tasks
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.errors import ContextOverflow
from agentbus.core.messages import ActionProposed, Observation
from agentbus.llm.backends.base import Backend
from agentbus.llm.backends.openai_backend import OpenAIBackend, VLLMBackend, token_limit_param
from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.config import EndpointLimits as Limits
from agentbus.llm.limits import EndpointGate
from agentbus.llm.retry import is_context_overflow
from agentbus.llm.router import LLMRouter
from agentbus.llm.spec import parse_spec
from agentbus.llm.tools import complete_with_tools, read_tool_calls
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from agentbus.sim.config import SimConfig
from agentbus.sim.faults import FaultConfig
from agentbus.sim.service import sim_service

LONG = [
    {"role": "system", "content": "You are the reasoning module of an LLM agent."},
    {"role": "user", "content": "## Task\n" + "A long history line. " * 400},
]

#: the servers' own sentences (OpenAI, vLLM, llama-cpp-python, llama.cpp's server, Anthropic)
WORDINGS = [
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "9000 tokens. Please reduce the length of the messages.",
    "This model's maximum context length is 2048 tokens. However, you requested 2751 tokens "
    "(2239 in the messages, 512 in the completion).",
    "'max_tokens' or 'max_completion_tokens' is too large: 512. This model's maximum context "
    "length is 2048 tokens and your request has 1700 input tokens (512 > 2048 - 1700).",
    "The prompt (total length 3000) is too long to fit into the model (context length 2048).",
    "the request exceeds the available context size, try increasing it",
    "Requested tokens (2751) exceed context window of 2048",
    "prompt is too long: 210000 tokens > 200000 maximum",
    "Input prompt (5000 tokens) is too long and exceeds limit of 4096",
]


@pytest.mark.parametrize("message", WORDINGS)
def test_every_servers_context_overflow_wording_is_recognised(message: str) -> None:
    assert is_context_overflow(400, message)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "'messages' must be a non-empty list"),
        (400, "temperature must be between 0 and 2"),
        (503, "maximum context length is 2048 tokens"),  # a 502/503 is the server's trouble
        (404, "The model 'gpt-5x' does not exist"),
    ],
)
def test_other_errors_are_not_context_overflows(status: int, message: str) -> None:
    assert not is_context_overflow(status, message)


@pytest.mark.parametrize("style", ["openai", "vllm", "llama-cpp-python", "llama-server"])
async def test_a_context_400_is_the_agents_failure_not_retried(style: str) -> None:
    faults = FaultConfig(context_window=1000, context_style=style)  # type: ignore[arg-type]
    async with sim_service(SimConfig(speed=0, experts=[], faults=faults)) as sim:
        url = sim.base_url
        limits = EndpointLimits(max_retries=5, backoff_base=0.01, backoff_max=0.02)
        async with LLMRouter(LLMConfig(limits=limits), sim=sim) as router:
            for spec in (f"vllm:{url}#weak", "sim:weak"):
                llm = router.client(spec)
                with pytest.raises(ContextOverflow, match="context"):
                    await llm.complete(LONG)
                short = await llm.complete([*LONG[:1], {"role": "user", "content": "## Task\nhi"}])
                assert short.text
            stats = router.stats()["total"]
    assert stats["context_overflows"] == 2
    assert stats["retries"] == 0 and stats["errors"] == 0


async def test_the_anthropic_route_answers_in_anthropics_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    async with sim_service(
        SimConfig(speed=0, experts=[], faults=FaultConfig(context_window=1000))
    ) as sim:
        async with LLMRouter(LLMConfig(), sim=sim) as router:
            llm = router.client(f"anthropic:{sim.base_url}#weak")
            with pytest.raises(ContextOverflow, match="prompt is too long"):
                await llm.complete(LONG)


async def test_truncation_reports_length_and_the_cap_is_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    faults = FaultConfig(rate_truncate=1.0)
    async with sim_service(SimConfig(speed=0, experts=[], faults=faults)) as sim:
        cfg = LLMConfig(models={f"openai:{sim.base_url}#weak": Limits(max_tokens=20)})
        async with LLMRouter(cfg, sim=sim) as router:
            llm = router.client(f"vllm:{sim.base_url}#weak")
            cut = await llm.complete(LONG, SamplingParams(max_tokens=30))
            assert cut.finish_reason == "length" and cut.completion_tokens <= 30
            # the per-model cap bounds what a module asks for
            capped = router.client(f"openai:{sim.base_url}#weak")
            answer = await capped.complete(LONG, SamplingParams(max_tokens=400))
            assert answer.completion_tokens <= 20 and answer.finish_reason == "length"
            assert router.stats()["total"]["truncated"] == 2


def test_the_output_cap_goes_out_under_the_name_each_server_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert token_limit_param("max_completion_tokens", None) == "max_completion_tokens"
    assert token_limit_param("max_completion_tokens", "https://api.openai.com/v1") == (
        "max_completion_tokens"
    )
    assert token_limit_param("max_completion_tokens", "http://127.0.0.1:8080/v1") == "max_tokens"
    assert token_limit_param("max_completion_tokens", "https://openrouter.ai/api/v1") == (
        "max_tokens"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    params = SamplingParams(max_tokens=5)
    local = OpenAIBackend(
        parse_spec("openai:http://127.0.0.1:8080/v1#m"),
        "http://127.0.0.1:8080/v1",
        Limits(),
        _context(),
    )
    hosted = OpenAIBackend(parse_spec("openai:gpt-4o-mini"), None, Limits(), _context())
    vllm = VLLMBackend(
        parse_spec("vllm:http://h:8000/v1#m"), "http://h:8000/v1", Limits(), _context()
    )
    assert local.request_options(params)["max_tokens"] == 5
    assert "max_completion_tokens" not in local.request_options(params)
    assert hosted.request_options(params)["max_completion_tokens"] == 5
    assert vllm.request_options(params)["max_tokens"] == 5


def _context() -> Any:
    from agentbus.llm.backends.base import BackendContext

    return BackendContext()


class TextCallBackend(Backend):
    """A server with native tools that hands the call back as text (no tool-call parser)."""

    name: ClassVar[str] = "textcalls"
    supports_tools: ClassVar[bool] = True
    answers: ClassVar[list[str]] = []

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        return Completion(text=self.answers.pop(0), model="m", finish_reason="stop")


TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
)


async def test_tool_calls_in_the_text_are_read_for_a_native_tools_backend() -> None:
    backend = TextCallBackend(parse_spec("openai:m"), None, Limits(), _context())
    TextCallBackend.answers = [
        'I will call it.\n```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>',
        '{"name": "get_weather", "parameters": {"city": "Lima"}}',
        '```json\n{"name": "get_time", "arguments": {}}\n```',
        "The weather is fine.",
    ]
    params = SamplingParams(tools=TOOLS)
    results = [await complete_with_tools(backend, [], params) for _ in range(5)]
    cities = [r.tool_calls[0].arguments if r.tool_calls else None for r in results]
    assert cities[:3] == ['{"city":"Oslo"}', '{"city":"Rome"}', '{"city":"Lima"}']
    assert results[0].text == "I will call it."
    # a call of a function nobody offered is counted, not used; prose is just prose
    assert results[3].tool_calls == [] and results[3].invalid_tool_calls == 1
    assert results[4].tool_calls == [] and results[4].invalid_tool_calls == 0


def test_read_tool_calls_leaves_json_that_is_no_call_alone() -> None:
    text, calls, invalid = read_tool_calls('Result: {"x": 1} and [1, 2]', {"f"})
    assert calls == [] and invalid == 0 and text.startswith("Result")
    _, calls, invalid = read_tool_calls("<tool_call>{not json}</tool_call>", {"f"})
    assert calls == [] and invalid == 1


class WaitsForASlot(Actor):
    """Waits ``queued`` s for a model slot, works ``own`` s, then acts."""

    queued: ClassVar[float] = 0.0
    own: ClassVar[float] = 0.0
    gate: ClassVar[EndpointGate | None] = None

    @on(Observation)
    async def go(self, msg: Observation) -> ActionProposed:
        assert self.gate is not None
        async with self.gate.permit(10):
            await anyio.sleep(self.own)
        return ActionProposed(text="0")


async def _episode_with_a_busy_slot(own: float, timeout: float, hold: float) -> Any:
    gate = EndpointGate(Limits(max_concurrency=1))
    WaitsForASlot.gate, WaitsForASlot.own = gate, own
    task = demo_tasks(1)[0]
    spec = EpisodeSpec(
        "queued", task, CountdownEnvironment, [ActorSpec("action", WaitsForASlot)],
        timeout_s=timeout, max_steps=1,
    )  # fmt: skip
    async with anyio.create_task_group() as tg:

        async def occupy() -> None:
            async with gate.permit(10):
                await anyio.sleep(hold)

        tg.start_soon(occupy)
        await anyio.sleep(0.01)
        outcome = await Episode(spec).run()
    return outcome


async def test_time_queued_for_a_model_slot_is_not_the_episodes_time() -> None:
    # 1.0 s queued behind another episode's call, 0.1 s of its own: a 0.5 s timeout holds
    outcome = await _episode_with_a_busy_slot(own=0.1, timeout=0.5, hold=1.0)
    assert outcome.error_kind != "timeout", outcome.reason
    assert outcome.details.get("model_queue_s", 0) >= 0.9
    # its own slowness still times out, and the message names the flag
    slow = await _episode_with_a_busy_slot(own=1.0, timeout=0.5, hold=0.3)
    assert slow.error_kind == "timeout"
    assert "--episode-timeout" in slow.reason and "queued for a" not in slow.reason
