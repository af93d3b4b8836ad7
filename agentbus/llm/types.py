"""The client protocol every LLM backend implements.

Modules only see :class:`LLM`: ``await llm.complete(messages, params)``. Which
backend answers (vLLM, OpenAI, Anthropic, the simulator), through which
replica, with what caching, limits and retries, is decided by the LLM layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class ChatMessage(TypedDict):
    """One chat turn, in the OpenAI shape every backend maps from."""

    role: Literal["system", "user", "assistant"]
    content: str


class SamplingParams(BaseModel):
    """Sampling options; ``extra`` carries backend-only options (vLLM's extra_body)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = 0.0
    max_tokens: int = 512
    top_p: float = 1.0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    extra: dict[str, Any] = Field(default_factory=dict)
    #: functions offered to the model, in the OpenAI tools format
    #: (``{"type": "function", "function": {...}}``); see agentbus/llm/tools.py
    tools: tuple[dict[str, Any], ...] = ()

    @property
    def deterministic(self) -> bool:
        """True when the same prompt must give the same answer (cache is exact)."""
        return self.temperature == 0.0 or self.seed is not None


class ToolCall(BaseModel):
    """One function call the model asked for; ``arguments`` is JSON text, as on the wire."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = ""
    name: str
    arguments: str = "{}"


class Completion(BaseModel):
    """A model's answer with its usage accounting."""

    model_config = ConfigDict(extra="forbid")

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: prompt tokens read from the provider's prompt cache (part of ``prompt_tokens``)
    cached_prompt_tokens: int = 0
    latency_s: float = 0.0
    #: answered by the run's own cache or by a coalesced in-flight call (not billed again)
    cached: bool = False
    finish_reason: str = "stop"
    #: function calls, when tools were offered and the model called some
    tool_calls: list[ToolCall] = Field(default_factory=list)
    #: calls the model wrote that could not be used (unknown function, arguments
    #: not a JSON object, a ``<tool_call>`` block that is not JSON)
    invalid_tool_calls: int = 0


@runtime_checkable
class LLM(Protocol):
    """Anything that completes a chat: a backend, a router, a cache, a per-episode handle."""

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion: ...
