"""Provider-style rate limits for the simulator: token buckets, headers, 429 and 529.

A hosted API does not slow down like a GPU server does; it refuses. Each API
key (optionally each key and model) gets token buckets refilled continuously,
as OpenAI and Anthropic describe theirs: requests per minute, tokens per
minute (input plus output, OpenAI), input and output tokens per minute
(Anthropic). A bucket holds one minute's allowance, so a fresh key can burst.
A request is charged at admission with its prompt tokens plus ``max_tokens``
(the providers' documented estimate) and refunded the unused output tokens
when it ends; cached prompt tokens do not count against input tokens, as on
Anthropic. When a bucket cannot pay, the answer is 429 with ``retry-after``
set to the time the bucket needs. Every answer carries the provider's
headers: OpenAI's ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``
(resets as Go-style durations, ``6m0s``, ``1.5s``, ``20ms``) on the chat
routes, Anthropic's ``anthropic-ratelimit-{requests,tokens,input-tokens,
output-tokens}-{limit,remaining,reset}`` (resets as RFC 3339 times) on
``/v1/messages``. Above ``overload_above`` requests in flight the Messages
route answers 529 ``overloaded_error`` at ``overload_rate``.

Presets carry published tier figures and a heavy-tailed latency (lognormal
time to first token plus a per-token decode time): a provider's fleet is
not the one batched GPU of :mod:`agentbus.sim.serving`, so with a latency
set requests skip the batch seats and just take that long.

Time compression: a "minute" lasts ``60 / time_scale`` wall seconds (by
default the simulator's ``speed``), and latencies are divided by the same
factor, so a benchmark can run ten provider minutes in one wall minute while
every ratio (requests per latency, burst per refill) stays as it is.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: bucket names, as the headers spell them
REQUESTS, TOKENS, INPUT, OUTPUT = "requests", "tokens", "input-tokens", "output-tokens"

PresetName = Literal["openai-tier1", "openai-tier2", "anthropic-tier1", "anthropic-tier4"]


@dataclass(frozen=True)
class Preset:
    """Published limits of one provider tier, and a latency shaped like its API's."""

    rpm: float
    tpm: float | None = None
    itpm: float | None = None
    otpm: float | None = None
    latency_median_s: float = 0.8
    latency_sigma: float = 0.6
    tpot_s: float = 0.01


#: Figures as the providers published them (they change; check your own console):
#: OpenAI gpt-4o-mini, usage tiers 1 and 2 (platform.openai.com/docs/guides/rate-limits):
#: 500 RPM / 200,000 TPM and 5,000 RPM / 2,000,000 TPM. Anthropic Claude Sonnet 4.x,
#: tiers 1 and 4 (docs.anthropic.com/en/api/rate-limits): 50 RPM / 30,000 ITPM /
#: 8,000 OTPM and 4,000 RPM / 2,000,000 ITPM / 400,000 OTPM. Latencies are rough
#: shapes (median time to first token, lognormal spread), not measurements.
PRESETS: dict[str, Preset] = {
    "openai-tier1": Preset(rpm=500, tpm=200_000, latency_median_s=0.6, tpot_s=0.008),
    "openai-tier2": Preset(rpm=5_000, tpm=2_000_000, latency_median_s=0.6, tpot_s=0.008),
    "anthropic-tier1": Preset(
        rpm=50, itpm=30_000, otpm=8_000, latency_median_s=1.0, latency_sigma=0.7, tpot_s=0.015
    ),
    "anthropic-tier4": Preset(
        rpm=4_000,
        itpm=2_000_000,
        otpm=400_000,
        latency_median_s=1.0,
        latency_sigma=0.7,
        tpot_s=0.015,
    ),
}


class ProviderLimitsConfig(BaseModel):
    """``[sim.limits]``: a preset, or any of its figures set (or overridden) one by one."""

    model_config = ConfigDict(extra="forbid")

    preset: PresetName | None = None
    rpm: float | None = Field(None, gt=0)
    #: input + output tokens per minute (OpenAI's TPM)
    tpm: float | None = Field(None, gt=0)
    #: input tokens per minute, cached tokens not counted (Anthropic's ITPM)
    itpm: float | None = Field(None, gt=0)
    #: output tokens per minute (Anthropic's OTPM)
    otpm: float | None = Field(None, gt=0)
    #: ``key``: one set of buckets per API key; ``key+model``: per key and model
    per: Literal["key", "key+model"] = "key"
    #: provider minutes per wall minute; None = the simulator's speed (1 when speed is 0)
    time_scale: float | None = Field(None, gt=0)
    #: median time to first token (lognormal); None = the batched serving model's timing
    latency_median_s: float | None = Field(None, ge=0)
    latency_sigma: float = Field(0.6, ge=0)
    #: no single request waits longer than this many medians (the tail is cut there)
    latency_max_factor: float = Field(30.0, ge=1)
    tpot_s: float = Field(0.01, ge=0)
    #: requests in flight above which /v1/messages answers 529 overloaded
    overload_above: int | None = Field(None, ge=0)
    overload_rate: float = Field(1.0, ge=0, le=1)
    seed: int | None = 0

    @model_validator(mode="after")
    def _fill_from_preset(self) -> ProviderLimitsConfig:
        preset = PRESETS.get(self.preset) if self.preset else None
        if preset is None:
            return self
        for name in ("rpm", "tpm", "itpm", "otpm"):
            if getattr(self, name) is None:
                setattr(self, name, getattr(preset, name))
        if self.latency_median_s is None:
            self.latency_median_s = preset.latency_median_s
            if "latency_sigma" not in self.model_fields_set:
                self.latency_sigma = preset.latency_sigma
            if "tpot_s" not in self.model_fields_set:
                self.tpot_s = preset.tpot_s
        return self

    @property
    def active(self) -> bool:
        return any(
            v is not None for v in (self.rpm, self.tpm, self.itpm, self.otpm, self.latency_median_s)
        ) or (self.overload_above is not None)


class Bucket:
    """A continuously refilled bucket holding one (scaled) minute's allowance."""

    def __init__(self, per_minute: float, window_s: float) -> None:
        self.limit = per_minute
        self.rate = per_minute / window_s
        self.level = per_minute
        self._stamp = time.monotonic()

    def refill(self, now: float) -> None:
        self.level = min(self.limit, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    def wait_for(self, cost: float) -> float:
        """Seconds until ``cost`` can be paid (a cost above the limit needs a full bucket)."""
        need = min(cost, self.limit)
        return max(0.0, (need - self.level) / self.rate)

    def reset_s(self) -> float:
        """Seconds until the bucket is full again (OpenAI's and Anthropic's "reset")."""
        return max(0.0, (self.limit - self.level) / self.rate)


def format_duration(seconds: float) -> str:
    """OpenAI's reset format: ``6m0s``, ``1.5s``, ``20ms`` (fractions kept: time may be scaled)."""
    if seconds < 1.0:
        return f"{_trim(seconds * 1000.0)}ms"
    minutes, rest = divmod(seconds, 60.0)
    if minutes >= 1:
        return f"{int(minutes)}m{_trim(rest)}s"
    return f"{_trim(seconds)}s"


def _trim(x: float) -> str:
    return f"{x:.3f}".rstrip("0").rstrip(".") or "0"


def format_rfc3339(seconds_from_now: float) -> str:
    """Anthropic's reset format: an RFC 3339 UTC time (microseconds kept)."""
    when = datetime.now(UTC) + timedelta(seconds=seconds_from_now)
    return when.isoformat().replace("+00:00", "Z")


@dataclass
class Ticket:
    """One admitted request: what it was charged, refunded when its real output is known."""

    buckets: dict[str, Bucket]
    max_tokens: int
    headers: dict[str, str] = field(default_factory=dict)
    #: the limiter's running totals of what was charged, net of refunds
    charged: dict[str, float] = field(default_factory=dict)

    def settle(self, completion_tokens: int) -> None:
        unused = max(0, self.max_tokens - completion_tokens)
        now = time.monotonic()
        for name in (TOKENS, OUTPUT):
            bucket = self.buckets.get(name)
            if bucket is not None:
                bucket.refill(now)
                bucket.level = min(bucket.limit, bucket.level + unused)
                if name in self.charged:
                    self.charged[name] -= unused


class RateLimited(Exception):
    """No room in a bucket: answer 429 with these headers."""

    def __init__(self, retry_after: float, headers: dict[str, str], which: str) -> None:
        super().__init__(f"rate limit reached for {which} (simulated provider)")
        self.retry_after = retry_after
        self.headers = headers


class ProviderLimiter:
    """Buckets per key (and model), admission, headers, overload and latency draws."""

    def __init__(self, config: ProviderLimitsConfig, speed: float) -> None:
        self.config = config
        scale = config.time_scale or (speed if speed > 0 else 1.0)
        self.scale = scale
        self.window_s = 60.0 / scale
        self._keys: dict[str, dict[str, Bucket]] = {}
        self._rng = random.Random(config.seed)
        self.admitted = 0
        self.rejected = 0
        self.overloaded = 0
        self.charged = {REQUESTS: 0.0, TOKENS: 0.0, INPUT: 0.0, OUTPUT: 0.0}

    @property
    def provider_latency(self) -> bool:
        """Whether requests take the preset's latency instead of a batch seat."""
        return self.config.latency_median_s is not None

    def _buckets(self, key: str, model: str) -> dict[str, Bucket]:
        scope = f"{key}\x00{model}" if self.config.per == "key+model" else key
        found = self._keys.get(scope)
        if found is None:
            c = self.config
            found = {
                name: Bucket(limit, self.window_s)
                for name, limit in (
                    (REQUESTS, c.rpm),
                    (TOKENS, c.tpm),
                    (INPUT, c.itpm),
                    (OUTPUT, c.otpm),
                )
                if limit is not None
            }
            self._keys[scope] = found
        return found

    def overload(self, in_flight: int) -> bool:
        """Whether a Messages request arriving with ``in_flight`` others answers 529."""
        limit = self.config.overload_above
        if limit is None or in_flight <= limit:
            return False
        if self._rng.random() < self.config.overload_rate:
            self.overloaded += 1
            return True
        return False

    def admit(
        self,
        key: str,
        model: str,
        *,
        input_tokens: int,
        cached_tokens: int,
        max_tokens: int,
        style: str,
    ) -> Ticket:
        """Charge one request or raise :class:`RateLimited` (nothing charged then)."""
        buckets = self._buckets(key, model)
        costs = {
            REQUESTS: 1.0,
            TOKENS: float(input_tokens + max_tokens),
            INPUT: float(max(0, input_tokens - cached_tokens)),
            OUTPUT: float(max_tokens),
        }
        now = time.monotonic()
        waits: dict[str, float] = {}
        for name, bucket in buckets.items():
            bucket.refill(now)
            wait = bucket.wait_for(costs[name])
            if wait > 0:
                waits[name] = wait
        if waits:
            self.rejected += 1
            which = max(waits, key=lambda n: waits[n])
            wait = waits[which]
            raise RateLimited(wait, self.headers(buckets, style), which)
        for name, bucket in buckets.items():
            bucket.level -= costs[name]
            self.charged[name] += costs[name]
        self.admitted += 1
        return Ticket(buckets, max_tokens, self.headers(buckets, style), self.charged)

    def headers(self, buckets: dict[str, Bucket], style: str) -> dict[str, str]:
        """The provider's rate-limit headers for the state of ``buckets`` now.

        A 429 adds ``retry-after`` (and ``retry-after-ms``) where it is answered.
        """
        out: dict[str, str] = {}
        if style == "anthropic":
            for name, each in buckets.items():
                out.update(_anthropic(name, each))
            if TOKENS not in buckets:  # "tokens" = the most restrictive token limit in effect
                tight = [b for n, b in buckets.items() if n in (INPUT, OUTPUT)]
                if tight:
                    out.update(_anthropic(TOKENS, min(tight, key=lambda b: b.level / b.limit)))
        else:
            for name in (REQUESTS, TOKENS):
                found = buckets.get(name) or (buckets.get(INPUT) if name == TOKENS else None)
                if found is not None:
                    bucket = found
                    out[f"x-ratelimit-limit-{name}"] = str(int(bucket.limit))
                    out[f"x-ratelimit-remaining-{name}"] = str(max(0, math.floor(bucket.level)))
                    out[f"x-ratelimit-reset-{name}"] = format_duration(bucket.reset_s())
        return out

    def latency(self, completion_tokens: int) -> tuple[float, float]:
        """(time to first token, decode time) of one request, in wall seconds."""
        c = self.config
        median = c.latency_median_s or 0.0
        ttft = median * math.exp(self._rng.gauss(0.0, c.latency_sigma)) if median else 0.0
        ttft = min(ttft, median * c.latency_max_factor)
        return ttft / self.scale, completion_tokens * c.tpot_s / self.scale

    def describe(self) -> str:
        """One line: the limits per minute, the time scale and the overload rule."""
        c = self.config
        parts = [
            f"{limit:,.0f} {name}/min"
            for name, limit in (("RPM", c.rpm), ("TPM", c.tpm), ("ITPM", c.itpm), ("OTPM", c.otpm))
            if limit is not None
        ]
        parts.append(f"per {c.per}")
        if self.scale != 1.0:
            parts.append(f"a minute lasts {self.window_s:g} s (time scale {self.scale:g})")
        if c.latency_median_s is not None:
            parts.append(f"latency median {c.latency_median_s:g} s, sigma {c.latency_sigma:g}")
        if c.overload_above is not None:
            parts.append(f"529 above {c.overload_above} in flight")
        return ", ".join(parts)

    def stats(self) -> dict[str, object]:
        return {
            "time_scale": self.scale,
            "admitted": self.admitted,
            "rejected_429": self.rejected,
            "overloaded_529": self.overloaded,
            "charged": {k: round(v) for k, v in self.charged.items()},
            "limits_per_minute": {
                name: limit
                for name, limit in (
                    (REQUESTS, self.config.rpm),
                    (TOKENS, self.config.tpm),
                    (INPUT, self.config.itpm),
                    (OUTPUT, self.config.otpm),
                )
                if limit is not None
            },
        }


def _anthropic(name: str, bucket: Bucket) -> dict[str, str]:
    prefix = f"anthropic-ratelimit-{name}"
    return {
        f"{prefix}-limit": str(int(bucket.limit)),
        f"{prefix}-remaining": str(max(0, math.floor(bucket.level))),
        f"{prefix}-reset": format_rfc3339(bucket.reset_s()),
    }
