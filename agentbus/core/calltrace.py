"""LLM calls in an episode's trace: what each module was asked and what it answered.

The bus trace shows what modules *said* to each other; a transcript also needs
what each module was *sent* (its prompt) and the model's raw answer. When an
episode is traced, every call a module makes through its metered model adds one
``LLMCall`` entry to the trace, in the order the calls finished:

``{"type": "LLMCall", "sender": SLOT, "seq": N, "model": MODEL,
"prompt": [[ROLE, CONTENT_OR_REF], ...], "answer": TEXT, "tool_calls": [...],
"cached": BOOL, "tokens": [IN, OUT]}``

A module's prompts repeat themselves within an episode (the same system prompt
and task every round, a history that grows by one turn), so each distinct
content is stored once per episode and numbered in order of first appearance:
a message seen before is written as its number; a new one that shares a long
head and tail with a recent one is written as ``[NUMBER, HEAD, MIDDLE, TAIL]``
(the first HEAD and last TAIL characters of that earlier content around the new
MIDDLE). On the default math run this keeps the trace with prompts at about
twice the size of the trace without them, instead of five times.
:func:`expand_prompts` undoes it. ``seq`` is the seq of the last bus message
traced before the call ended, so the trace stays ordered by seq.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agentbus.llm.types import ChatMessage, Completion

LLM_CALL = "LLMCall"


#: earlier contents a new one is compared with for a shared head and tail
RECENT = 6
#: shared characters below which a content is stored whole
MIN_SHARED = 64


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix (binary search on slices: C-speed compares)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class CallTrace:
    """Appends ``LLMCall`` entries to one episode's trace list (see the module docstring)."""

    __slots__ = ("_seen", "_texts", "_trace")

    def __init__(self, trace: list[dict[str, Any]]) -> None:
        self._trace = trace
        self._seen: dict[str, int] = {}
        self._texts: list[str] = []

    def _encode(self, text: str) -> Any:
        index = self._seen.get(text)
        if index is not None:
            return index
        best: list[Any] | None = None
        best_shared = MIN_SHARED - 1
        start = max(0, len(self._texts) - RECENT)
        for i in range(len(self._texts) - 1, start - 1, -1):
            other = self._texts[i]
            head = _common_prefix(other, text)
            tail = _common_suffix(other, text, min(len(other), len(text)) - head)
            if head + tail > best_shared:
                best_shared = head + tail
                best = [i, head, text[head : len(text) - tail], tail]
        self._seen[text] = len(self._texts)
        self._texts.append(text)
        return text if best is None else best

    def add(
        self, slot: str, model: str, messages: Sequence[ChatMessage], result: Completion
    ) -> None:
        prompt: list[list[Any]] = []
        for m in messages:
            content = m.get("content")
            text = content if isinstance(content, str) else str(content)
            prompt.append([m.get("role", "user"), self._encode(text)])
        last = self._trace[-1].get("seq", 0) if self._trace else 0
        entry: dict[str, Any] = {
            "type": LLM_CALL,
            "sender": slot,
            "seq": last,
            "model": model or result.model,
            "prompt": prompt,
            "answer": result.text,
            "cached": result.cached,
            "tokens": [result.prompt_tokens, result.completion_tokens],
        }
        if result.tool_calls:
            entry["tool_calls"] = [c.model_dump(mode="json") for c in result.tool_calls]
        self._trace.append(entry)


def _decode(item: Any, table: list[str]) -> str:
    if isinstance(item, int):
        return table[item] if 0 <= item < len(table) else ""
    if isinstance(item, list) and len(item) == 4:
        index, head, middle, tail = item
        base = table[index] if isinstance(index, int) and 0 <= index < len(table) else ""
        text = base[:head] + str(middle) + (base[len(base) - tail :] if tail else "")
    else:
        text = str(item)
    table.append(text)
    return text


def expand_prompts(trace: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trace with every ``LLMCall`` prompt written out in full, as ``[{role, content}]``."""
    table: list[str] = []
    out: list[dict[str, Any]] = []
    for entry in trace:
        if entry.get("type") != LLM_CALL or not isinstance(entry.get("prompt"), list):
            out.append(entry)
            continue
        messages = []
        for item in entry["prompt"]:
            if not isinstance(item, list | tuple) or len(item) != 2:
                continue
            role, content = item
            messages.append({"role": str(role), "content": _decode(content, table)})
        out.append({**entry, "prompt": messages})
    return out
