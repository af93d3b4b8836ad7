"""The simulated model's answer record, its token counts and its random stream.

Both the prompt-reading model (:mod:`agentbus.sim.model`) and the gateway's
generic model (:mod:`agentbus.sim.gateway_model`) produce a :class:`SimAnswer`,
count tokens the same way and draw from the same seeded stream, so these live
here, below both, instead of one importing the other.

Tokens are approximated as ``ceil(chars / 4)`` per text, plus 4 per chat
message for the role framing: close enough to BPE counts on English and code
to make serving times and usage realistic, and free to compute.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from agentbus.llm.types import ChatMessage, SamplingParams, ToolCall
from agentbus.sim.expert import Verdict

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4


def count_tokens(text: str) -> int:
    """Approximate token count: one token per four characters, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def prompt_tokens(messages: Sequence[ChatMessage]) -> int:
    """Approximate prompt tokens of a chat, with a small per-message framing cost."""
    return sum(count_tokens(m["content"]) + MESSAGE_OVERHEAD_TOKENS for m in messages)


def _digest(*parts: object) -> int:
    blob = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY)
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


def make_rng(
    model: str | None, messages: Sequence[ChatMessage], params: SamplingParams
) -> random.Random:
    """The answer's random stream: fixed at temperature 0, seeded with a seed, else fresh.

    ``model=None`` gives the stream every model shares for this prompt (used
    for coupled verdicts).
    """
    prompt = [[m["role"], m["content"]] for m in messages]
    if params.temperature == 0.0:
        return random.Random(_digest("t0", model, prompt))
    if params.seed is not None:
        return random.Random(_digest("seed", params.seed, model, prompt))
    return random.Random()


@dataclass(frozen=True)
class SimAnswer:
    """What the model produced for one request, with the facts behind it."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    role: str
    profile: str
    task_id: str | None = None
    verdict: Verdict | None = None
    p_correct: float | None = None
    #: the stop string that cut the text, if any (Anthropic reports it)
    stop_sequence: str | None = None
    #: function calls parsed out of the text when the request offered tools
    tool_calls: tuple[ToolCall, ...] = ()
