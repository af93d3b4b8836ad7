"""Fault injection: the failures a real model server shows, at configured rates.

Each request draws one uniform number from a seeded stream; it falls into one
of the intervals ``rate_429``, ``rate_500``, ``rate_drop``, ``rate_stall`` (in
that order) or none. Independently, with ``rate_malformed`` the answer text is
mangled the way a misbehaving server or tokenizer mangles it (cut short,
fences lost, a stray special token). The stream is seeded, so a run with the
same concurrency pattern sees the same faults; under concurrency the order in
which requests draw can differ, but the rates hold.

Where each fault strikes: 429 and 500 are answered at once, before the
request queues (a gateway in front of the engine); a stall sleeps
``stall_s`` real seconds (never scaled by speed: it exists to test client
timeouts) before the answer; a dropped connection happens after the request
has taken its batch seat (mid-stream for streaming requests). The HTTP server
turns these into status codes and a closed socket; the in-process transport
raises the :class:`SimFault` subclasses below, which carry the same meaning.
"""

from __future__ import annotations

import enum
import random

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentbus.errors import InfraError


class FaultConfig(BaseModel):
    """Rates (probability per request) of each injected failure."""

    model_config = ConfigDict(extra="forbid")

    rate_429: float = Field(0.0, ge=0.0, le=1.0)
    #: seconds the 429 answer asks the client to wait (Retry-After)
    retry_after_s: float = Field(1.0, ge=0.0)
    rate_500: float = Field(0.0, ge=0.0, le=1.0)
    rate_drop: float = Field(0.0, ge=0.0, le=1.0)
    rate_stall: float = Field(0.0, ge=0.0, le=1.0)
    #: extra seconds a stalled request waits (wall clock, not scaled by speed)
    stall_s: float = Field(30.0, ge=0.0)
    rate_malformed: float = Field(0.0, ge=0.0, le=1.0)
    #: seed of the fault stream; None draws fresh randomness
    seed: int | None = 0

    @model_validator(mode="after")
    def _rates_fit(self) -> FaultConfig:
        total = self.rate_429 + self.rate_500 + self.rate_drop + self.rate_stall
        if total > 1.0 + 1e-9:
            raise ValueError(
                f"rate_429 + rate_500 + rate_drop + rate_stall must be <= 1, got {total:g}"
            )
        return self

    @property
    def any(self) -> bool:
        return (
            self.rate_429 + self.rate_500 + self.rate_drop + self.rate_stall + self.rate_malformed
        ) > 0


class Fault(enum.Enum):
    NONE = "none"
    RATE_LIMIT = "429"
    SERVER_ERROR = "500"
    DROP = "drop"
    STALL = "stall"


class SimFault(InfraError):
    """A simulated server failure; ``status`` is the HTTP status it stands for."""

    status: int | None = None
    label: str = "fault"

    def __init__(
        self,
        message: str,
        retry_after: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        #: response headers the HTTP answer carries (a provider's rate-limit headers)
        self.headers = headers or {}


class SimRateLimited(SimFault):
    status = 429
    label = "429"


class SimOverloaded(SimFault):
    """Anthropic's 529: the provider as a whole is overloaded (not this key's limit)."""

    status = 529
    label = "529"


class SimServerError(SimFault):
    status = 500
    label = "500"


class SimConnectionDropped(SimFault):
    status = None
    label = "dropped"


class FaultInjector:
    """Draws the fault of each request and mangles text, from one seeded stream."""

    def __init__(self, config: FaultConfig | None = None) -> None:
        self.config = config or FaultConfig()
        self._rng = random.Random(self.config.seed)
        self.counts: dict[str, int] = {f.value: 0 for f in Fault} | {"malformed": 0}

    def draw(self) -> Fault:
        c = self.config
        if not c.any:
            return Fault.NONE
        u = self._rng.random()
        fault = Fault.NONE
        for rate, kind in (
            (c.rate_429, Fault.RATE_LIMIT),
            (c.rate_500, Fault.SERVER_ERROR),
            (c.rate_drop, Fault.DROP),
            (c.rate_stall, Fault.STALL),
        ):
            if u < rate:
                fault = kind
                break
            u -= rate
        self.counts[fault.value] += 1
        return fault

    def malform(self, text: str) -> str | None:
        """A mangled copy of ``text`` at ``rate_malformed``, else None."""
        if self.config.rate_malformed <= 0 or self._rng.random() >= self.config.rate_malformed:
            return None
        self.counts["malformed"] += 1
        kind = self._rng.randrange(4)
        if kind == 0:  # cut short mid-answer
            return text[: max(1, len(text) // 2)]
        if kind == 1:  # formatting lost
            return text.replace("```", "").replace("\n", " ").strip()
        if kind == 2:  # a stray special token and a repeated tail
            return text + "<|eot_id|>" + text[-20:]
        return ""  # an empty answer
