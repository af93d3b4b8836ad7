"""Classified upstream failures and the backoff between retries.

Backends turn their SDK's exceptions into :class:`UpstreamError` with a
``kind``; the retry loop (in the router, because a retry may go to another
replica) retries the transient kinds with full-jitter exponential backoff,
waits at least as long as the server's Retry-After, and finally raises one
:class:`~agentbus.core.errors.InfraError` that names the endpoint. URLs are shown
without credentials; API keys never appear anywhere.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

ErrorKind = Literal[
    "rate_limit", "server", "connection", "timeout", "client", "auth", "context_overflow"
]

RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "connection", "timeout"})


class UpstreamError(Exception):
    """A call to an endpoint failed; ``kind`` says whether trying again can help."""

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def __str__(self) -> str:
        detail = self.kind.replace("_", " ")
        if self.status:
            detail += f", HTTP {self.status}"
        return f"{self.args[0]} ({detail})"


def connection_cause(exc: BaseException) -> str | None:
    """The name of the network error behind ``exc``, if a failed connection caused it.

    Transports disagree on names: aiohttp's adapter under the SDKs reports a
    refused connection as a *connect timeout*. Walking the cause chain down to
    the operating system's error tells the two apart, so "server down" does
    not read as "server slow".
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    found: str | None = None
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and not isinstance(current, TimeoutError):
            found = type(current).__name__
        elif type(current).__name__ in ("ClientConnectorError", "ServerDisconnectedError"):
            found = found or type(current).__name__
        current = current.__cause__ or current.__context__
    return found


def kind_for_status(status: int) -> ErrorKind:
    """Map an HTTP status to an error kind (408/409/425/429 and 5xx are transient).

    Anthropic's 529 (overloaded) is a rate limit too for our purposes: the
    answer is to send less for a while, not to take the endpoint out.
    """
    if status in (429, 529):
        return "rate_limit"
    if status in (408, 409, 425) or status >= 500:
        return "server"
    if status in (401, 403):
        return "auth"
    return "client"


#: how servers say that the prompt (or the prompt and the answer being written)
#: does not fit the context window, as HTTP 400 (413/422 from some gateways) or
#: as HTTP 500, in the wordings of OpenAI ("This model's maximum context length
#: is 8192 tokens", code ``context_length_exceeded``, "Your input exceeds the
#: context window of this model"), vLLM (the same sentence, "... is too long to
#: fit into the model", "Input prompt (N tokens) is too long and exceeds limit
#: of M", "The decoder prompt (length N) is longer than the maximum model length
#: of M"), llama.cpp's server ("the request exceeds the available context
#: size", type ``exceed_context_size_error``, "Context size has been exceeded",
#: "context shift is disabled"), llama-cpp-python ("Requested tokens (N) exceed
#: context window of M", and its HTTP 500 when the answer runs into the end of
#: the window: numpy's "could not broadcast input array from shape (N,) into
#: shape (0,)") and Anthropic ("prompt is too long: N tokens > M maximum",
#: "input length and `max_tokens` exceed context limit")
_OVERFLOW = re.compile(
    r"maximum context length"
    r"|context[_ ]length[_ ]exceeded"
    r"|exceed_context_size"
    r"|exceeds? (?:the )?(?:available )?context (?:size|window|length|limit)"
    r"|context size has been exceeded"
    r"|context shift is disabled"
    r"|prompt is too long"
    r"|too long to fit into the model"
    r"|longer than the maximum model length"
    r"|could not broadcast input array from shape \(\d+,?\) into shape \(0,?\)"
    r"|(?:input|prompt)\b[^.]{0,60}\btoo long\b[^.]{0,60}\b(?:limit|context|maximum)",
    re.IGNORECASE,
)

#: statuses a context overflow comes back with: the 4xx of a refused prompt, and
#: the 500 of servers that fail part way through an answer that ran out of room
OVERFLOW_STATUSES = frozenset({None, 400, 413, 422, 500})


def is_context_overflow(status: int | None, message: str) -> bool:
    """Whether an error answer says the prompt outgrew the model's context window.

    A 500 counts only in these words: the server answered, and the request is
    what did not fit, so retrying it cannot help and the agent's prompt is the
    cause; a 502/503 stays the infrastructure's trouble whatever it says.
    """
    if status not in OVERFLOW_STATUSES:
        return False
    return _OVERFLOW.search(message) is not None


def cut_at_context_limit(finish_reason: str, completion_tokens: int, max_tokens: int) -> bool:
    """Whether an answer stopped for length before its own output limit.

    ``finish_reason: "length"`` with fewer tokens than ``max_tokens`` means the
    context window ended the answer (llama.cpp and vLLM stop there with
    ``length``): the same overflow as a refused prompt, only found later.
    """
    return finish_reason == "length" and 0 < completion_tokens < max_tokens


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(
    attempt: int,
    *,
    base: float,
    cap: float,
    retry_after: float | None = None,
    rand: Callable[[], float] = random.random,
) -> float:
    """Delay before retry number ``attempt + 1`` (attempt counts from 0).

    Full jitter: uniform in [0, min(cap, base * 2**attempt)], which spreads a
    crowd of failed requests out instead of sending them back in lockstep.
    With a Retry-After the delay is that long plus a little jitter of the same
    kind, since the server said when it will be ready.
    """
    ceiling = min(cap, base * (2.0 ** min(attempt, 62)))
    if retry_after is not None:
        return retry_after + rand() * min(ceiling, base)
    return rand() * ceiling


def redact_url(url: str) -> str:
    """``url`` without user info or query string (either may hold a secret)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
