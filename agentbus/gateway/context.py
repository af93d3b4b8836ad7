"""What an in-process (Python callable) agent receives besides its task."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class AgentContext:
    """The episode's endpoint, token and switched-off modules, plus ready SDK clients.

    ``base_url`` is the OpenAI-style base URL (ends in ``/v1``);
    ``anthropic_base_url`` is what the Anthropic SDK takes (it adds ``/v1``
    itself). ``api_key`` is the episode token: it works for this episode only
    and only against the gateway, never against a provider. The clients are
    made on first use, so an agent that brings its own pays nothing for them.
    """

    task_id: str
    base_url: str
    anthropic_base_url: str
    api_key: str
    off_slots: frozenset[str] = frozenset()
    #: HTTP connection pools shared by every episode's SDK clients (the gateway's):
    #: a pool per client would cost a TLS context each (~20 ms of CPU) per episode
    shared: dict[str, Any] | None = field(default=None, repr=False)
    _clients: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def openai(self) -> Any:
        """An ``openai.AsyncOpenAI`` pointed at the gateway with the episode token."""
        return self._client("openai", "AsyncOpenAI", self.base_url)

    @property
    def anthropic(self) -> Any:
        """An ``anthropic.AsyncAnthropic`` pointed at the gateway with the episode token."""
        return self._client("anthropic", "AsyncAnthropic", self.anthropic_base_url)

    def _client(self, sdk_name: str, cls: str, base_url: str) -> Any:
        """The SDK's client ``cls`` for this episode, made (the SDK imported) on first use."""
        client = self._clients.get(sdk_name)
        if client is None:
            sdk = importlib.import_module(sdk_name)
            client = self._clients[sdk_name] = getattr(sdk, cls)(
                base_url=base_url,
                api_key=self.api_key,
                max_retries=0,
                http_client=self._pool(sdk_name, sdk),
            )
        return client

    def _pool(self, name: str, sdk: Any) -> Any:
        """The shared HTTP client for ``sdk`` (made on first use), or None for a private one."""
        if self.shared is None:
            return None
        pool = self.shared.get(name)
        if pool is None:
            from agentbus.llm.http_module import http_module

            http = http_module(sdk)  # httpx2 or httpx, as this SDK version is built on
            limits = http.Limits(max_connections=None, max_keepalive_connections=1000)
            pool = self.shared[name] = sdk.DefaultAsyncHttpxClient(limits=limits, timeout=600.0)
        return pool

    def request(self, task: dict[str, Any]) -> dict[str, Any]:
        """What a service (``--agent-url``) is posted and a worker reads, per episode."""
        return {
            "task": task,
            "base_url": self.base_url,
            "anthropic_base_url": self.anthropic_base_url,
            "api_key": self.api_key,
            "off_slots": sorted(self.off_slots),
        }

    def env(self) -> dict[str, str]:
        """The environment variables a child process gets (the command agent's contract)."""
        return {
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": self.api_key,
            "ANTHROPIC_BASE_URL": self.anthropic_base_url,
            "ANTHROPIC_API_KEY": self.api_key,
            "AGENTBUS_OFF_SLOTS": ",".join(sorted(self.off_slots)),
            "AGENTBUS_TASK_ID": self.task_id,
        }

    async def aclose(self) -> None:
        """Close the SDK clients made for this episode (a shared pool stays open)."""
        if self.shared is None:
            await close_each(client.close for client in self._clients.values())
        self._clients.clear()


async def close_each(closes: Iterable[Callable[[], Awaitable[object]]]) -> None:
    """Await every close; one that fails (a half-made client) leaves the rest to close."""
    for close in closes:
        with contextlib.suppress(Exception):
            await close()


__all__ = ["AgentContext", "close_each"]
