"""What an LLM backend is: one client (one connection pool) for one endpoint.

The router builds one backend per endpoint of a model (one per replica) for
the whole run and puts limits, retries, caching and accounting around it, so
a backend only has to make one call and say how it failed. A third-party
backend subclasses :class:`Backend` and registers itself as an entry point in
the ``agentbus.backends`` group; its spec is then ``NAME:MODEL`` or
``NAME:URL[,URL...]#MODEL``.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from agentbus.core.errors import UserError
from agentbus.core.logs import scrub
from agentbus.llm.config import EndpointLimits
from agentbus.llm.pacing import report_headers
from agentbus.llm.retry import (
    UpstreamError,
    connection_cause,
    is_context_overflow,
    kind_for_status,
    parse_retry_after,
    redact_url,
)
from agentbus.llm.spec import ModelSpec, default_base_url
from agentbus.llm.types import ChatMessage, Completion, SamplingParams


@dataclass(frozen=True, slots=True)
class BackendContext:
    """What the run gives every backend besides its spec: the simulator, if one runs."""

    sim: Any = None
    #: how ``sim:`` models are reached: ``auto``, ``http`` or ``inprocess``
    sim_transport: str = "auto"
    #: transport under the official SDKs: ``aiohttp`` (scales) or ``httpx`` (their default)
    http_client: str = "aiohttp"


class Backend(ABC):
    """One endpoint of one model.

    ``complete`` makes exactly one attempt and raises
    :class:`~agentbus.llm.retry.UpstreamError` on a failure it can classify;
    the router decides about retries. ``endpoint`` is ``None`` when the SDK's
    default URL is used.
    """

    name: ClassVar[str] = "backend"
    #: environment variable holding the API key (None: the backend takes none)
    api_key_env: ClassVar[str | None] = None
    #: whether a missing key is an error (a provider) or fine (a local server)
    key_required: ClassVar[bool] = False
    #: adaptive concurrency when the config leaves it unset: on for rate-limited APIs
    adaptive_default: ClassVar[bool] = False
    #: whether ``SamplingParams.tools`` go to the provider natively; if not, the
    #: router offers them in the prompt and parses the calls out of the text
    #: (agentbus/llm/tools.py)
    supports_tools: ClassVar[bool] = False

    def __init__(
        self,
        spec: ModelSpec,
        endpoint: str | None,
        limits: EndpointLimits,
        context: BackendContext,
    ) -> None:
        self.spec = spec
        self.endpoint = endpoint
        self.limits = limits
        self.context = context
        self.setup()

    def setup(self) -> None:  # noqa: B027 (optional hook, nothing to set up by default)
        """Build what the calls need (an SDK client, a transport) from the fields above.

        ``__init__`` calls it last, so a backend adds its client here instead
        of repeating the constructor's signature.
        """

    @classmethod
    def endpoints(cls, spec: ModelSpec, context: BackendContext) -> list[str | None]:
        """The endpoints (replicas) of ``spec``: its URLs, else the backend's default."""
        return list(spec.base_urls) or [default_base_url(spec.backend)]

    def _api_key(self) -> str:
        """The key from ``api_key_env``; a clear UserError when a required one is missing."""
        env = self.api_key_env
        key = os.environ.get(env, "").strip() if env else ""
        if key:
            return key
        if self.key_required:
            raise UserError(f"model {self.spec.key} needs the {env} environment variable")
        return "EMPTY"

    @property
    def label(self) -> str:
        """How errors and logs name this endpoint: spec and URL, never a key."""
        if self.endpoint is None:
            return f"{self.spec.backend}:{self.spec.model}"
        return f"{self.spec.backend}:{self.spec.model} at {redact_url(self.endpoint)}"

    @abstractmethod
    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams
    ) -> Completion: ...

    async def aclose(self) -> None:  # noqa: B027 (optional hook, nothing to close by default)
        """Close the connection pool; called once when the run ends."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label}>"


def short(text: str, limit: int = 200) -> str:
    """One line of at most ``limit`` characters, for error messages.

    Every upstream error message passes through here on its way to the
    outcome, the event log and the console, so secrets are scrubbed here: a
    gateway's 401 may quote the API key it was sent.
    """
    text = scrub(" ".join(str(text).split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def sdk_upstream_error(sdk: Any, exc: Exception, label: str) -> UpstreamError | None:
    """Classify an exception of an official SDK (``openai`` or ``anthropic``).

    Both SDKs share the same exception hierarchy (``APIConnectionError`` with
    ``APITimeoutError`` under it, ``APIStatusError``, ``APIError``), so one
    classifier serves both; ``None`` means the exception is not the SDK's.
    """
    if isinstance(exc, sdk.APIConnectionError):  # APITimeoutError is one too
        cause = connection_cause(exc)
        if cause is not None:
            return UpstreamError(f"{label}: connection failed ({cause})", kind="connection")
        if isinstance(exc, sdk.APITimeoutError):
            return UpstreamError(f"{label}: request timed out", kind="timeout")
        inner = exc.__cause__ or exc
        return UpstreamError(
            f"{label}: connection failed ({type(inner).__name__})", kind="connection"
        )
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        report_headers(exc.response.headers)  # a 429's headers: the freshest word on the limits
        said = f"{exc.message} {getattr(exc, 'code', None) or ''} {_body_text(exc)}"
        return status_error(label, status, exc.message, said, exc.response.headers)
    if isinstance(exc, sdk.APIError):
        return UpstreamError(f"{label}: bad response ({short(str(exc))})", kind="server")
    return None


def status_error(
    label: str, status: int, message: str, said: str, headers: Mapping[str, str]
) -> UpstreamError:
    """An error answer classified: context overflow from ``said`` (message, type and
    code), else by status, with the Retry-After the headers give."""
    if is_context_overflow(status, said):
        return UpstreamError(f"{label}: {short(message)}", kind="context_overflow", status=status)
    return UpstreamError(
        f"{label}: {short(message)}",
        kind=kind_for_status(status),
        status=status,
        retry_after=parse_retry_after(dict(headers)),
    )


@contextmanager
def sdk_errors(sdk: Any, label: str) -> Iterator[None]:
    """Inside the block, an SDK exception :func:`sdk_upstream_error` knows leaves as an
    :class:`~agentbus.llm.retry.UpstreamError`; anything else passes unchanged."""
    try:
        yield
    except Exception as exc:
        err = sdk_upstream_error(sdk, exc, label)
        if err is None:
            raise
        raise err from exc


def _body_text(exc: Any) -> str:
    """The error body's type and code, where the SDK kept them (llama.cpp names its kind there)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return f"{inner.get('type') or ''} {inner.get('code') or ''}"
    return ""
