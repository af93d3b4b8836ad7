"""Call accounting of the LLM layer, per model and in total.

``requested`` counts what modules asked for; ``sent`` what actually went
upstream (one per distinct call, retries not included); the difference is
``cache_hits + coalesced``. The run summary prints the two side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(slots=True)
class ModelStats:
    """Counters of one model (all of its replicas together)."""

    requested: int = 0
    sent: int = 0
    cache_hits: int = 0
    coalesced: int = 0
    errors: int = 0
    retries: int = 0
    rate_limited: int = 0
    #: of the rate-limited answers, Anthropic-style 529 overloaded
    overloaded: int = 0
    #: seconds failed calls waited before their retry (backoff, Retry-After)
    backoff_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s_total: float = 0.0
    latency_s_max: float = 0.0
    #: successful upstream calls (the denominator of the mean latency)
    succeeded: int = 0
    #: answers cut at the token limit (``finish_reason == "length"``)
    truncated: int = 0
    #: calls refused because the prompt outgrew the model's context window
    context_overflows: int = 0

    def record(self, prompt_tokens: int, completion_tokens: int, latency_s: float) -> None:
        self.succeeded += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.latency_s_total += latency_s
        if latency_s > self.latency_s_max:
            self.latency_s_max = latency_s

    def add(self, other: ModelStats) -> None:
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            value = max(mine, theirs) if f.name == "latency_s_max" else mine + theirs
            setattr(self, f.name, value)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["latency_s_mean"] = self.latency_s_total / self.succeeded if self.succeeded else 0.0
        out["saved_ratio"] = 1.0 - self.sent / self.requested if self.requested else 0.0
        return out


def summary_line(total: ModelStats) -> str:
    """``LLM calls: requested R, sent S (x.xx of requested)`` for the run summary."""
    ratio = total.sent / total.requested if total.requested else 0.0
    return (
        f"LLM calls: requested {total.requested}, sent {total.sent} ({ratio:.2f} of requested;"
        f" {total.cache_hits} cache hits, {total.coalesced} coalesced)"
    )
