"""The LLM layer: one client protocol, several backends, shared calls and limits."""

from agentbus.llm.types import LLM, ChatMessage, Completion, SamplingParams

__all__ = ["LLM", "ChatMessage", "Completion", "SamplingParams"]
