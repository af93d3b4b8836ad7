"""In-process access to the simulator: the same engine as the HTTP server, no sockets.

Unit tests and single-process runs call :meth:`SimTransport.complete`; it goes
through the same model, serving delays, faults and metrics as a request to
the HTTP server. Failures are raised as the :mod:`agentbus.sim.faults`
exceptions whose ``status`` matches the HTTP answer (429 with
``retry_after``, 500, a dropped connection with status None), and an unknown
model name as :class:`agentbus.core.errors.UserError` (the server's 404).

With a :class:`~agentbus.sim.worker.SimThread` the engine runs on the
simulator's own loop in that thread (``SimConfig.thread``): the caller's loop
only sends the request and takes the answer back in a bounded batch.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from agentbus.llm.pacing import report_headers
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from agentbus.sim.engine import SimEngine, SimRequest
from agentbus.sim.faults import SimFault
from agentbus.sim.model import strip_backend
from agentbus.sim.worker import SimThread


class SimTransport:
    """``complete(model, messages, params)`` straight into a :class:`SimEngine`."""

    def __init__(self, engine: SimEngine, thread: SimThread | None = None) -> None:
        self.engine = engine
        #: where the engine runs when not on the caller's loop
        self.thread = thread

    async def complete(
        self,
        model: str,
        messages: Sequence[ChatMessage],
        params: SamplingParams | None = None,
    ) -> Completion:
        """One chat completion, with usage and latency; raises like the server fails."""
        params = params or SamplingParams()
        started = time.perf_counter()
        meta: dict[str, Any] = {}
        request = SimRequest(model, list(messages), params)
        try:
            if self.thread is None:
                answer = await self.engine.run(request, None, meta)
            else:
                answer = await self.thread.call(lambda: self.engine.run(request, None, meta))
        except SimFault as exc:  # a 429's headers tell the client what is left, as over HTTP
            report_headers(exc.headers)
            raise
        report_headers(meta.get("headers"))  # provider limits: paced as over HTTP
        return Completion(
            text=answer.text,
            model=strip_backend(model),
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            latency_s=time.perf_counter() - started,
            finish_reason=answer.finish_reason,
            tool_calls=list(answer.tool_calls),
            cached_prompt_tokens=int(meta.get("cached_tokens") or 0),
        )
