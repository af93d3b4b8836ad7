"""``sim:NAME``: the simulated model, reached the way a real one would be.

By default (``sim_transport`` ``auto`` or ``http``) it is the OpenAI path: the
official ``AsyncOpenAI`` SDK against the simulator's loopback server, so every
test and benchmark exercises the same client code as a vLLM run. With
``inprocess`` (or when the simulator serves no HTTP) it calls the simulator's
in-process transport directly, which skips sockets and JSON for fast unit
tests; the transport's :class:`~agentbus.sim.faults.SimFault` errors are
classified like the HTTP statuses they stand for.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

from agentbus.core.errors import InfraError, UserError
from agentbus.llm.backends.base import Backend, BackendContext
from agentbus.llm.backends.openai_backend import VLLMBackend
from agentbus.llm.retry import ErrorKind, UpstreamError, is_context_overflow, kind_for_status
from agentbus.llm.spec import ModelSpec
from agentbus.llm.types import ChatMessage, Completion, SamplingParams

#: the endpoint name of the in-process path
INPROCESS = "inprocess"


def _require_sim(spec: ModelSpec, context: BackendContext) -> Any:
    if context.sim is None:
        raise UserError(
            f"model {spec.key} needs the simulator, but this run did not start one "
            "(pass sim= to LLMRouter)"
        )
    return context.sim


class SimBackend(Backend):
    """The simulator over HTTP (official OpenAI SDK) or in process."""

    name: ClassVar[str] = "sim"
    #: the simulator parses tool calls out of its answers when tools are offered
    supports_tools: ClassVar[bool] = True

    def setup(self) -> None:
        sim = _require_sim(self.spec, self.context)
        self._http: _SimHTTP | None = None
        self._transport: Any = None
        if self.endpoint == INPROCESS:
            self._transport = getattr(sim, "transport", None)
            if self._transport is None:
                raise UserError(f"model {self.spec.key}: the simulator has no in-process transport")
        else:
            self._http = _SimHTTP(self.spec, self.endpoint, self.limits, self.context)

    @classmethod
    def endpoints(cls, spec: ModelSpec, context: BackendContext) -> list[str | None]:
        sim = _require_sim(spec, context)
        base_url: str | None = getattr(sim, "base_url", None)
        if context.sim_transport == "inprocess":
            return [INPROCESS]
        if context.sim_transport == "http" and not base_url:
            raise UserError(
                f"model {spec.key}: sim_transport is 'http' but the simulator serves no HTTP"
            )
        return [base_url] if base_url else [INPROCESS]

    @property
    def label(self) -> str:
        where = "in process" if self.endpoint == INPROCESS else f"at {self.endpoint}"
        return f"sim:{self.spec.model} {where}"

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> Completion:
        if self._http is not None:
            return await self._http.complete(messages, params)
        start = time.perf_counter()
        try:
            result: Completion = await self._transport.complete(self.spec.model, messages, params)
        except InfraError as exc:  # the simulator's faults (SimFault) are InfraErrors
            raise _classify(exc, self.label) from exc
        if not result.latency_s:
            result = result.model_copy(update={"latency_s": time.perf_counter() - start})
        return result

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()


class _SimHTTP(VLLMBackend):
    """The simulator's server speaks vLLM's dialect of the OpenAI API."""

    api_key_env: ClassVar[str | None] = None

    def _api_key(self) -> str:
        return "sim"

    @property
    def label(self) -> str:
        return f"sim:{self.spec.model} at {self.endpoint}"


def _classify(exc: InfraError, label: str) -> UpstreamError:
    status = getattr(exc, "status", None)
    retry_after = getattr(exc, "retry_after", None)
    kind: ErrorKind = kind_for_status(status) if isinstance(status, int) else "connection"
    if isinstance(status, int) and is_context_overflow(status, str(exc)):
        kind = "context_overflow"
    return UpstreamError(f"{label}: {exc}", kind=kind, status=status, retry_after=retry_after)
