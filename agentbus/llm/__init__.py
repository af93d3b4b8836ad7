"""The LLM layer: one client protocol, several backends, shared calls and limits.

Typical use::

    async with LLMRouter(LLMConfig(), sim=sim) as router:
        llm = router.client("sim:weak")
        answer = await llm.complete(messages, SamplingParams())
        print(router.summary())
"""

from agentbus.llm.config import AdaptiveConcurrency, EndpointLimits, LLMConfig
from agentbus.llm.router import LLMRouter
from agentbus.llm.spec import ModelSpec, parse_spec
from agentbus.llm.types import LLM, ChatMessage, Completion, SamplingParams

__all__ = [
    "LLM",
    "AdaptiveConcurrency",
    "ChatMessage",
    "Completion",
    "EndpointLimits",
    "LLMConfig",
    "LLMRouter",
    "ModelSpec",
    "SamplingParams",
    "parse_spec",
]
