"""A user's agent's time limit, less the time its gateway calls waited for a model slot.

``--agent-timeout`` is there to stop an agent that hangs, not to fail a
healthy one because the run's own traffic queued its model calls: with one
model slot and sixteen agents in flight, each waits for the other fifteen at
every call. The episode timeout already leaves such waits out
(:mod:`agentbus.llm.queueing`: the LLM layer reports every wait for a model
slot to the episode's :class:`QueueClock`, which moves the deadline out).
The agent's limit does the same: the driver gives each run of the agent a
clock of its own (:func:`agent_clock`), the gateway reports its calls' waits
to it as well as to the episode's, and a runner's :func:`agent_deadline`
binds its cancel scope to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import anyio

from agentbus.llm.queueing import QueueClock

_AGENT_CLOCK: ContextVar[QueueClock | None] = ContextVar("agentbus_agent_clock", default=None)


@contextmanager
def agent_clock(clock: QueueClock) -> Iterator[QueueClock]:
    """Make ``clock`` the one :func:`agent_deadline` binds to, for the code inside."""
    token = _AGENT_CLOCK.set(clock)
    try:
        yield clock
    finally:
        _AGENT_CLOCK.reset(token)


@contextmanager
def agent_deadline(limit_s: float | None) -> Iterator[anyio.CancelScope]:
    """Like ``anyio.fail_after(limit_s)``, with the agent clock's waits added to the deadline.

    Raises :class:`TimeoutError` when the limit (plus the waits) ran out.
    Outside an agent clock it is plain ``fail_after``.
    """
    limit = float("inf") if limit_s is None else limit_s
    clock = _AGENT_CLOCK.get()
    with anyio.CancelScope() as scope:
        deadline = anyio.current_time() + limit
        if clock is not None:
            clock.bind(scope, deadline)
        else:
            scope.deadline = deadline
        yield scope
    if scope.cancelled_caught and anyio.current_time() >= scope.deadline:
        raise TimeoutError


__all__ = ["agent_clock", "agent_deadline"]
