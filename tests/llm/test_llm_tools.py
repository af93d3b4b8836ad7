"""Function calling in the LLM layer: native where a backend has it, the text format elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import orjson

from agentbus import Backend, BackendContext, ChatMessage, Completion, SamplingParams
from agentbus.llm.config import EndpointLimits
from agentbus.llm.router import with_defaults
from agentbus.llm.spec import parse_spec
from agentbus.llm.tools import complete_with_tools, format_tool_call, split_tool_calls

TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather of a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
)


class PromptReader(Backend):
    """A text-only model: it calls get_weather only when its prompt lists that function."""

    name: ClassVar[str] = "reader"

    def __init__(self) -> None:
        super().__init__(parse_spec("anthropic:x"), None, EndpointLimits(), BackendContext())
        self.seen: list[Sequence[ChatMessage]] = []
        self.params: list[SamplingParams] = []

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        self.seen.append(messages)
        self.params.append(params)
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        text = "No functions here."
        if '"name":"get_weather"' in system and "<tool_call>" in system:
            text = "Let me look.\n" + format_tool_call("get_weather", {"city": "Oslo"})
        return Completion(text=text, model="x")


def test_split_keeps_malformed_blocks_in_the_text() -> None:
    text = (
        'a <tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call> b '
        "<tool_call>not json</tool_call>"
    )
    rest, calls = split_tool_calls(text)
    assert [(c.name, orjson.loads(c.arguments)) for c in calls] == [("f", {"x": 1})]
    assert "not json" in rest and "a" in rest and "b" in rest


async def test_text_backend_gets_tools_in_the_prompt_and_calls_parsed_back() -> None:
    backend = PromptReader()
    messages: list[ChatMessage] = [
        {"role": "system", "content": "You are a helper."},
        {"role": "user", "content": "Weather in Oslo?"},
    ]
    result = await complete_with_tools(backend, messages, SamplingParams(tools=TOOLS))
    assert [(c.name, orjson.loads(c.arguments)) for c in result.tool_calls] == [
        ("get_weather", {"city": "Oslo"})
    ]
    assert result.text == "Let me look."
    assert backend.params[0].tools == ()  # the text path never sends tools natively
    assert backend.seen[0][0]["content"].startswith("You are a helper.")
    # without tools the prompt is untouched and no call appears
    plain = await complete_with_tools(backend, messages, SamplingParams())
    assert plain.tool_calls == [] and backend.seen[1] == messages


def test_module_params_keep_the_run_defaults() -> None:
    run = SamplingParams(temperature=0.7, seed=3, max_tokens=100)
    merged = with_defaults(run, SamplingParams(tools=TOOLS))
    assert (merged.temperature, merged.seed, merged.max_tokens, merged.tools) == (
        0.7,
        3,
        100,
        TOOLS,
    )
    assert with_defaults(run, SamplingParams(temperature=0.0)).temperature == 0.0
