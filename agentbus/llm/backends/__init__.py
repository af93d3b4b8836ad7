"""LLM backends, found by name through the ``agentbus.backends`` entry points."""

from agentbus.llm.backends.base import Backend, BackendContext

__all__ = ["Backend", "BackendContext"]
