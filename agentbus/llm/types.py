"""The client protocol every LLM backend implements.

Modules only see :class:`LLM`: ``await llm.complete(messages, params)``. Which
backend answers (vLLM, OpenAI, Anthropic, the simulator), through which
replica, with what caching, limits and retries, is decided by the LLM layer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError


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

    @classmethod
    def from_body(
        cls,
        body: dict[str, Any],
        *,
        max_tokens: Any,
        stop: Any,
        temperature: float,
        default_max_tokens: int,
        error: Callable[[str, str], Exception],
        **fields: Any,
    ) -> SamplingParams:
        """The sampling options of an OpenAI or Anthropic request body.

        The simulator's server and the gateway read request bodies alike: the
        protocol names where ``max_tokens`` and ``stop`` come from, a missing
        temperature, top_p or max_tokens takes the given default, and a lone
        stop string is a list of one. ``fields`` are further options (tools).
        An invalid value raises ``error(message, param)`` for the first one
        (each server's own 400 error).
        """
        if isinstance(stop, str):
            stop = [stop]
        t = body.get("temperature")
        top_p = body.get("top_p")
        try:
            return cls(
                temperature=temperature if t is None else t,
                max_tokens=default_max_tokens if max_tokens is None else max_tokens,
                top_p=1.0 if top_p is None else top_p,
                seed=body.get("seed"),
                stop=tuple(stop or ()),
                **fields,
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            param = ".".join(str(p) for p in first["loc"])
            raise error(f"invalid {param}: {first['msg']}", param) from None


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
