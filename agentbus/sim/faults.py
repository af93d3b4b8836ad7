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

Besides failures of the server, real models misbehave in ways the parsers and
the counting must survive; these *behaviours* (:mod:`agentbus.sim.behaviours`)
are drawn from a second seeded stream, only when one of their rates is set,
so the failure stream above stays the same:

* ``context_window``: a prompt plus ``max_tokens`` larger than this many
  tokens is refused with HTTP 400 in the words of ``context_style``
  (``openai``, ``vllm``, ``llama-cpp-python``, ``llama-server``; the
  Anthropic route always answers in Anthropic's), as a real server does;
  ``rate_context_overflow`` refuses that share of requests so whatever
  their length;
* ``rate_truncate``: the model rambles before its answer and is cut at
  ``max_tokens`` (``finish_reason: "length"``), with no action left;
* ``rate_run_on``: after its answer the model writes the environment's next
  lines itself (``Feedback: ...``), which only a stop sequence removes;
* ``rate_tool_text``: a function call comes back as a fenced JSON block in
  the text with no ``tool_calls`` (a server without a tool-call parser);
* ``rate_copy_example``: the model copies the prompt's example block, or
  echoes its closing instruction, instead of answering.
"""

from __future__ import annotations

import enum
import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentbus.core.errors import InfraError

ContextStyle = Literal["openai", "vllm", "llama-cpp-python", "llama-server"]


class Behaviour(enum.Enum):
    """A model's misbehaviour drawn for one request (see the module docstring)."""

    NONE = "none"
    CONTEXT_OVERFLOW = "context_overflow"
    TRUNCATE = "truncate"
    RUN_ON = "run_on"
    TOOL_TEXT = "tool_text"
    COPY_EXAMPLE = "copy_example"


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
    #: the model's context window in tokens (None: unlimited); see the module docstring
    context_window: int | None = Field(None, ge=1)
    #: whose wording the context-overflow 400 uses on the OpenAI routes
    context_style: ContextStyle = "llama-cpp-python"
    rate_context_overflow: float = Field(0.0, ge=0.0, le=1.0)
    rate_truncate: float = Field(0.0, ge=0.0, le=1.0)
    rate_run_on: float = Field(0.0, ge=0.0, le=1.0)
    rate_tool_text: float = Field(0.0, ge=0.0, le=1.0)
    rate_copy_example: float = Field(0.0, ge=0.0, le=1.0)
    #: answer a model name no profile has with this profile instead of 404, as
    #: llama-cpp-python's server does (it serves its one model under any name)
    any_model: str | None = None

    @model_validator(mode="after")
    def _rates_fit(self) -> FaultConfig:
        total = self.rate_429 + self.rate_500 + self.rate_drop + self.rate_stall
        if total > 1.0 + 1e-9:
            raise ValueError(
                f"rate_429 + rate_500 + rate_drop + rate_stall must be <= 1, got {total:g}"
            )
        behaving = sum(rate for rate, _ in self.behaviour_rates())
        if behaving > 1.0 + 1e-9:
            raise ValueError(
                "rate_context_overflow + rate_truncate + rate_run_on + rate_tool_text + "
                f"rate_copy_example must be <= 1, got {behaving:g}"
            )
        return self

    def behaviour_rates(self) -> list[tuple[float, Behaviour]]:
        return [
            (self.rate_context_overflow, Behaviour.CONTEXT_OVERFLOW),
            (self.rate_truncate, Behaviour.TRUNCATE),
            (self.rate_run_on, Behaviour.RUN_ON),
            (self.rate_tool_text, Behaviour.TOOL_TEXT),
            (self.rate_copy_example, Behaviour.COPY_EXAMPLE),
        ]

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


class SimContextOverflow(SimFault):
    """HTTP 400: the prompt does not fit the context window; ``error_type``/``code`` as sent."""

    status = 400
    label = "400"

    def __init__(self, message: str, *, error_type: str, code: str | None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.code = code


class FaultInjector:
    """Draws the fault of each request and mangles text, from one seeded stream."""

    def __init__(self, config: FaultConfig | None = None) -> None:
        self.config = config or FaultConfig()
        self._rng = random.Random(self.config.seed)
        #: the behaviours' own stream (drawn only when a behaviour rate is set)
        self._behaviour_rng = random.Random(
            None if self.config.seed is None else self.config.seed + 1
        )
        self._behaving = any(rate > 0 for rate, _ in self.config.behaviour_rates())
        self.counts: dict[str, int] = {f.value: 0 for f in Fault} | {"malformed": 0}
        for b in Behaviour:
            if b is not Behaviour.NONE:
                self.counts[b.value] = 0

    def behaviour(self) -> Behaviour:
        """The misbehaviour of this request (NONE unless a behaviour rate is set)."""
        if not self._behaving:
            return Behaviour.NONE
        u = self._behaviour_rng.random()
        for rate, kind in self.config.behaviour_rates():
            if u < rate:
                return kind
            u -= rate
        return Behaviour.NONE

    def rng(self) -> random.Random:
        """The behaviours' random stream (which example to copy, how long to ramble)."""
        return self._behaviour_rng

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
