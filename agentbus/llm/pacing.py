"""Pacing from a provider's rate-limit headers, before any 429 is seen.

OpenAI answers every request with ``x-ratelimit-{limit,remaining,reset}-
{requests,tokens}`` (resets as durations such as ``6m0s``, ``1.5s``,
``20ms``); Anthropic with ``anthropic-ratelimit-{requests,tokens,
input-tokens,output-tokens}-{limit,remaining,reset}`` (resets as RFC 3339
times). Both describe a token bucket that holds a minute's allowance and
refills continuously, so one reading gives the whole picture: the bucket's
size (limit), its level (remaining) and its refill rate (``(limit -
remaining) / reset``, the time to refill what is missing).

:class:`HeaderPacer` keeps a local copy of each bucket it has read about:
it refills at the learned rate (times a small safety factor), is charged
with each request's estimate before the request is sent, and is pulled down
to the provider's word whenever a reading says there is less. A request
that the local copy cannot pay waits here, so a run slows down to the
provider's rate instead of finding it by 429s. One pacer serves every model
of one provider endpoint (a key's limits are shared across its requests).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

import anyio

#: dimensions a request is charged in, by header name
REQUESTS, TOKENS, INPUT, OUTPUT = "requests", "tokens", "input-tokens", "output-tokens"
DIMENSIONS = (REQUESTS, TOKENS, INPUT, OUTPUT)

HeadersSink = Callable[[Mapping[str, str]], None]

_sink: ContextVar[HeadersSink | None] = ContextVar("agentbus_headers_sink", default=None)


def report_headers(headers: Mapping[str, str] | None) -> None:
    """Hand a response's headers to whoever sent the request (a backend calls this).

    The router sets the receiver around each attempt (:func:`headers_sink`),
    so a backend needs no reference to the limits; outside an attempt this
    does nothing. Error responses count too: a 429's headers are the most
    current reading there is.
    """
    sink = _sink.get()
    if sink is not None and headers:
        sink(headers)


@contextmanager
def headers_sink(sink: HeadersSink) -> Iterator[None]:
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> float | None:
    """Seconds in an OpenAI reset such as ``6m0s``, ``1.5s``, ``20ms`` (None if unreadable)."""
    text = text.strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))  # a bare number of seconds
    except ValueError:
        pass
    pos, total = 0, 0.0
    for match in _DURATION.finditer(text):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return total if pos == len(text) else None


def parse_reset_time(text: str, now: float | None = None) -> float | None:
    """Seconds from now to an RFC 3339 time (Anthropic's reset), never negative."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True, slots=True)
class Reading:
    """What one response said about one bucket."""

    limit: float
    remaining: float
    reset_s: float

    @property
    def rate(self) -> float | None:
        """Refill rate per second, when the reading shows a deficit to measure it by."""
        missing = self.limit - self.remaining
        if missing <= 0 or self.reset_s <= 0:
            return None
        return missing / self.reset_s


def parse_headers(headers: Mapping[str, str]) -> dict[str, Reading]:
    """The buckets described by OpenAI- or Anthropic-style headers, by dimension."""
    lower = {k.lower(): v for k, v in headers.items()}
    out: dict[str, Reading] = {}
    if not any("ratelimit" in k for k in lower):
        return out  # vLLM, the simulator: no bucket described (skips 24 look-ups per answer)
    for dim in DIMENSIONS:
        openai = (
            lower.get(f"x-ratelimit-limit-{dim}"),
            lower.get(f"x-ratelimit-remaining-{dim}"),
            lower.get(f"x-ratelimit-reset-{dim}"),
        )
        anthropic = (
            lower.get(f"anthropic-ratelimit-{dim}-limit"),
            lower.get(f"anthropic-ratelimit-{dim}-remaining"),
            lower.get(f"anthropic-ratelimit-{dim}-reset"),
        )
        if all(v is not None for v in openai):
            reading = _reading(openai, parse_duration)
        elif all(v is not None for v in anthropic):
            reading = _reading(anthropic, parse_reset_time)
        else:
            continue
        if reading is not None:
            out[dim] = reading
    if INPUT in out or OUTPUT in out:
        # Anthropic's "tokens" is whichever of input/output is tighter now; the two
        # are tracked on their own, and charging "tokens" too would count twice
        out.pop(TOKENS, None)
    return out


def _reading(values: tuple[str | None, ...], reset: object) -> Reading | None:
    limit_s, remaining_s, reset_s = values
    try:
        limit = float(limit_s or "")
        remaining = float(remaining_s or "")
    except ValueError:
        return None
    seconds = reset(reset_s or "")  # type: ignore[operator]
    if seconds is None or limit <= 0:
        return None
    return Reading(limit, max(0.0, remaining), float(seconds))


class LearnedBucket:
    """A local copy of one provider bucket, refilled at the rate the headers show."""

    def __init__(self, reading: Reading, safety: float) -> None:
        self.safety = safety
        self.limit = reading.limit
        self.level = reading.remaining
        self.rate: float | None = None
        self._best_reset = 0.0
        #: the sum of downward corrections so far (see :meth:`correct`)
        self.corrections = 0.0
        self._stamp = time.monotonic()
        self.observe(reading)

    def refill(self, now: float) -> None:
        if self.rate is not None:
            rate = self.rate * self.safety
            self.level = min(self.limit, self.level + (now - self._stamp) * rate)
        self._stamp = now

    def observe(self, reading: Reading) -> None:
        """Learn the size and the rate (from the most precise reading so far)."""
        self.refill(time.monotonic())
        self.limit = reading.limit
        rate = reading.rate
        # a longer reset is a larger deficit measured: a finer estimate of the rate
        if rate is not None and reading.reset_s >= 0.5 * self._best_reset:
            self.rate = rate
            self._best_reset = max(self._best_reset, reading.reset_s)

    def correct(self, reading: Reading, level_at_send: float, corrections_at_send: float) -> None:
        """Pull the level down by what the provider had less than we thought at send time.

        ``level_at_send`` is this copy's level right after the request was
        charged here, the moment the provider charged it too; corrections made
        since are already in the level, so they are not applied twice.
        """
        drift = reading.remaining - level_at_send - (self.corrections - corrections_at_send)
        if drift < 0:
            self.refill(time.monotonic())
            self.level += drift
            self.corrections += drift

    def wait_for(self, cost: float) -> float:
        """Seconds until ``cost`` fits (a cost above the limit waits for a full bucket)."""
        need = min(cost, self.limit)
        if self.level >= need:
            return 0.0
        if self.rate is None:  # not learned yet: look again shortly
            return 0.05
        return (need - self.level) / (self.rate * self.safety)


#: per dimension: (local level right after the charge, corrections made until then)
Snapshot = dict[str, tuple[float, float]]


class HeaderPacer:
    """Every bucket one endpoint's headers describe; requests wait here for room."""

    def __init__(self, safety: float = 0.99) -> None:
        self.safety = safety
        self.buckets: dict[str, LearnedBucket] = {}
        self.waited_s = 0.0
        self.readings = 0
        #: when the pacer last made a request wait (monotonic), for "rate-limited" displays
        self.last_wait = -math.inf
        self._lock = anyio.Lock()

    def observe(self, headers: Mapping[str, str] | None, sent: Snapshot | None = None) -> None:
        """Read one response's headers; ``sent`` is what :meth:`acquire` returned for it."""
        if not headers:
            return
        readings = parse_headers(headers)
        if not readings:
            return
        self.readings += 1
        for dim, reading in readings.items():
            bucket = self.buckets.get(dim)
            if bucket is None:  # the first word about this bucket: start from it
                self.buckets[dim] = LearnedBucket(reading, self.safety)
                continue
            bucket.observe(reading)
            at_send = sent.get(dim) if sent is not None else None
            if at_send is not None:
                bucket.correct(reading, *at_send)

    @staticmethod
    def costs(prompt_tokens: int, max_tokens: int) -> dict[str, float]:
        """What one request is charged, as the providers estimate it at admission."""
        return {
            REQUESTS: 1.0,
            TOKENS: float(prompt_tokens + max_tokens),
            INPUT: float(prompt_tokens),
            OUTPUT: float(max_tokens),
        }

    async def acquire(self, costs: Mapping[str, float]) -> Snapshot:
        """Wait until every known bucket can pay its cost, then charge them (FIFO).

        Returns each bucket's level right after the charge (and its correction
        count), to compare with what the provider answers for this request.
        """
        if not self.buckets:
            return {}
        async with self._lock:
            started = time.monotonic()
            while True:
                now = time.monotonic()
                wait = 0.0
                for dim, bucket in self.buckets.items():
                    bucket.refill(now)
                    wait = max(wait, bucket.wait_for(costs.get(dim, 0.0)))
                if wait <= 0:
                    break
                self.last_wait = now
                await anyio.sleep(wait)
            snapshot: Snapshot = {}
            for dim, bucket in self.buckets.items():
                bucket.level -= costs.get(dim, 0.0)
                snapshot[dim] = (bucket.level, bucket.corrections)
            self.waited_s += time.monotonic() - started
            return snapshot

    def settle(self, dim: str, extra: float) -> None:
        """Charge ``extra`` more (refund if negative) once a request's real use is known."""
        bucket = self.buckets.get(dim)
        if bucket is not None:
            bucket.refill(time.monotonic())
            bucket.level = min(bucket.limit, bucket.level - extra)

    def rate_per_s(self, dim: str) -> float | None:
        bucket = self.buckets.get(dim)
        return None if bucket is None or bucket.rate is None else bucket.rate * self.safety

    def to_dict(self) -> dict[str, object]:
        return {
            "waited_s": round(self.waited_s, 3),
            "limits": {dim: b.limit for dim, b in self.buckets.items()},
            "rates_per_s": {
                dim: round(b.rate, 3) for dim, b in self.buckets.items() if b.rate is not None
            },
        }
