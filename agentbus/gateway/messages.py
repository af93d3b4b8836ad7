"""Typed bus messages for the calls an external agent makes through the gateway.

A native module's model call is visible in the trace through the messages it
publishes (a ``Plan``, a ``Thought``); an external agent publishes nothing, so
the gateway publishes one :class:`GatewayRequest` and one :class:`GatewayAnswer`
per call on the episode's bus. The trace, the live stream and transcripts show
them like any other message, with the module (the request's ``model`` field),
the slot it was mapped to and the model that answered.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agentbus.core.messages import Message


class GatewayMessage(Message):
    """Base of the gateway's messages: which module called, on which slot and model."""

    call: int = 0
    module: str
    slot: str | None = None
    model: str = ""


class GatewayRequest(GatewayMessage):
    """An external agent's module asked its model (the chat it sent, as the model sees it)."""

    api: str = "openai"
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: int = 0
    stream: bool = False


class GatewayAnswer(GatewayMessage):
    """The model's answer to a :class:`GatewayRequest`, or why the gateway refused the call."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    #: set when the call was refused (module off, unmapped) or failed upstream
    error: str | None = None


__all__ = ["GatewayAnswer", "GatewayMessage", "GatewayRequest"]
