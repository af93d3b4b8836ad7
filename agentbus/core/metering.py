"""What an episode's models cost: calls and tokens, summed and per slot.

The episode wraps each actor's model in :class:`MeteredLLM`, so the counting
happens in one place whatever the actor does with its model; the sums land in
the episode's :class:`~agentbus.core.outcome.Outcome`. Kept apart from the episode's
driving loop because it changes with billing, not with scheduling.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentbus.core.calltrace import CallTrace
from agentbus.core.errors import ContextOverflow
from agentbus.core.outcome import SlotUsage
from agentbus.llm.billing import billed_to
from agentbus.llm.types import LLM, ChatMessage, Completion, SamplingParams


class Usage:
    """LLM usage of one episode, summed over all of its actors, and per slot."""

    __slots__ = ("calls", "completion_tokens", "prompt_tokens", "slots")

    def __init__(self) -> None:
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.slots: dict[str, SlotUsage] = {}

    def slot(self, name: str, model: str) -> SlotUsage:
        found = self.slots.get(name)
        if found is None:
            found = self.slots[name] = SlotUsage(model=model)
        return found


class MeteredLLM:
    """Wraps an actor's model so the episode can report its tokens and calls, per slot."""

    __slots__ = ("_calls", "_inner", "_name", "_slot", "_usage")

    def __init__(
        self,
        inner: LLM,
        usage: Usage,
        slot: SlotUsage | None = None,
        *,
        calls: CallTrace | None = None,
        name: str = "",
    ) -> None:
        self._inner = inner
        self._usage = usage
        self._slot = slot
        self._calls = calls  # traced episodes: each call's prompt and answer
        self._name = name

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        try:
            if self._slot is not None:  # each upstream call's line names the slot it is for
                with billed_to(self._name, self._slot.model):
                    result = await self._inner.complete(messages, params)
            else:
                result = await self._inner.complete(messages, params)
        except ContextOverflow:
            if self._slot is not None:
                self._slot.context_overflows += 1
            raise
        u = self._usage
        u.calls += 1
        u.prompt_tokens += result.prompt_tokens
        u.completion_tokens += result.completion_tokens
        s = self._slot
        if s is not None:
            s.calls += 1
            s.input_tokens += result.prompt_tokens
            s.cached_input_tokens += result.cached_prompt_tokens
            s.output_tokens += result.completion_tokens
            reasons = s.finish_reasons
            reasons[result.finish_reason] = reasons.get(result.finish_reason, 0) + 1
            s.invalid_tool_calls += result.invalid_tool_calls
            if not result.cached:  # went upstream: billed to this run
                s.sent_calls += 1
                s.sent_input_tokens += result.prompt_tokens
                s.sent_cached_input_tokens += result.cached_prompt_tokens
                s.sent_output_tokens += result.completion_tokens
        if self._calls is not None:
            self._calls.add(self._name, s.model if s is not None else "", messages, result)
        return result


__all__ = ["MeteredLLM", "Usage"]
