"""How the simulated model misbehaves the way real small models and servers do.

The simulator's experts always answer in the format the parsers expect; real
models do not, and real servers refuse prompts that outgrow the context
window. These are the behaviours (configured in :class:`FaultConfig`, drawn by
:class:`FaultInjector`), applied by the engine to an answer the model made:
each turns it into what a real server sent back in our recordings with
llama.cpp (tests/data/real_answers/) and in the issue that asked for them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import replace

from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.faults import Behaviour, FaultConfig, SimContextOverflow
from agentbus.sim.model import SimAnswer, _apply_limits, count_tokens, prompt_tokens

_TOOL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_FENCE = re.compile(r"```[^\n]*\n.*?```", re.DOTALL)

#: what a small model writes before it gets to the point (and runs out of tokens)
_RAMBLE = (
    "Let me think about this step by step.\nFirst I need to understand the task "
    "and what has happened so far, then decide what to do next.\n"
)


def overflow(
    config: FaultConfig, messages: Sequence[ChatMessage], params: SamplingParams, style: str
) -> SimContextOverflow:
    """The 400 a server of ``config.context_style`` (or Anthropic) sends for this request."""
    prompt = prompt_tokens(messages)
    requested = prompt + params.max_tokens
    window = config.context_window or max(1, requested // 2)
    if style == "anthropic":
        return SimContextOverflow(
            f"prompt is too long: {requested} tokens > {window} maximum",
            error_type="invalid_request_error",
            code=None,
        )
    kind = config.context_style
    if kind == "llama-server":
        return SimContextOverflow(
            "the request exceeds the available context size, try increasing it",
            error_type="exceed_context_size_error",
            code=None,
        )
    if kind == "openai":
        return SimContextOverflow(
            f"This model's maximum context length is {window} tokens. However, your "
            f"messages resulted in {requested} tokens. Please reduce the length of the messages.",
            error_type="invalid_request_error",
            code="context_length_exceeded",
        )
    # vLLM and llama-cpp-python (which copies vLLM's sentence) say the same
    return SimContextOverflow(
        f"This model's maximum context length is {window} tokens. However, you requested "
        f"{requested} tokens ({prompt} in the messages, {params.max_tokens} in the "
        "completion). Please reduce the length of the messages or completion.",
        error_type="invalid_request_error" if kind == "llama-cpp-python" else "BadRequestError",
        code="context_length_exceeded" if kind == "llama-cpp-python" else None,
    )


def too_long(config: FaultConfig, messages: Sequence[ChatMessage], params: SamplingParams) -> bool:
    """Whether the prompt plus the output limit outgrows the configured window."""
    window = config.context_window
    return window is not None and prompt_tokens(messages) + params.max_tokens > window


def misbehave(
    kind: Behaviour,
    answer: SimAnswer,
    messages: Sequence[ChatMessage],
    params: SamplingParams,
    rng: random.Random,
) -> SimAnswer:
    """``answer`` as the model would have spoilt it with ``kind`` (unchanged for NONE)."""
    if kind is Behaviour.TRUNCATE:
        # ramble well past the limit, so the cut falls before the answer
        need = params.max_tokens + 20
        ramble = _RAMBLE * (need * 4 // len(_RAMBLE) + 1)
        return _limited(answer, ramble + answer.text, params)
    if kind is Behaviour.RUN_ON:
        rounds = rng.randint(1, 3)
        tail = "".join(
            f"\n\nFeedback: Correct, that worked.\n\nRound {n + 2}\nThought: Now the next step."
            for n in range(rounds)
        )
        return _limited(answer, answer.text + tail, params)
    if kind is Behaviour.TOOL_TEXT:
        if not params.tools or "<tool_call>" not in answer.text:
            return answer
        text = _TOOL_BLOCK.sub(lambda m: f"```json\n{m.group(1)}\n```", answer.text)
        return _limited(answer, text, params)
    if kind is Behaviour.COPY_EXAMPLE:
        examples = [m.group(0) for msg in messages for m in _FENCE.finditer(msg["content"])]
        if examples and rng.random() < 0.5:
            return _limited(answer, rng.choice(examples), params)
        last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        lines = [ln for ln in last.strip().splitlines() if ln.strip()]
        return _limited(answer, lines[-1] if lines else answer.text, params)
    return answer


def _limited(answer: SimAnswer, text: str, params: SamplingParams) -> SimAnswer:
    """The answer with ``text``, cut again by the request's stop strings and token limit."""
    text, finish, stop = _apply_limits(text, params)
    return replace(
        answer,
        text=text,
        completion_tokens=max(1, count_tokens(text)),
        finish_reason=finish,
        stop_sequence=stop,
        tool_calls=(),
    )


__all__ = ["misbehave", "overflow", "too_long"]
