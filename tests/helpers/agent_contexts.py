"""An episode's :class:`AgentContext` for runner tests that start no gateway.

The runners only pass the context on (its token and base URLs into the
command's environment or episode line), so a context with a numbered fake
token and an unreachable base URL tells which episode a result came from.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentbus.gateway.context import AgentContext


def context(n: int, off: Iterable[str] = ()) -> AgentContext:
    """Episode ``n``'s context: task ``t{n}``, token ``token-{n}``, ``off`` switched off."""
    return AgentContext(
        task_id=f"t{n}",
        base_url=f"http://127.0.0.1:9/e/{n}/v1",
        anthropic_base_url=f"http://127.0.0.1:9/e/{n}",
        api_key=f"token-{n}",
        off_slots=frozenset(off),
    )
