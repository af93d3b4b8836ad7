"""Choosing among a model's replicas: health, load from the servers, prefix affinity.

A model served by several OpenAI-compatible servers (``vllm:URL,URL,...#M``)
gets one :class:`ReplicaState` per server, which a :class:`HealthMonitor`
keeps current by reading every ``interval_s``:

* ``GET /health`` (vLLM's liveness route): a replica that does not answer
  200 is *drained*, no new request goes to it, the requests it holds finish
  or fail on their own, and it is asked again on the next round and taken
  back once it answers;
* ``GET /metrics`` (Prometheus text): ``vllm:num_requests_running``,
  ``vllm:num_requests_waiting`` and the KV-cache usage
  (``vllm:kv_cache_usage_perc``, before vLLM 0.10 ``vllm:gpu_cache_usage_perc``).
  The server's counts include every other client's requests (other Ray
  workers, other users), which this process cannot see otherwise.

:func:`choose` then picks the replica: the least-loaded one, except that
requests sharing a prompt prefix (the same module's system prompt and the
same task) go back to the replica that served that prefix last, where the
server's prefix cache still holds it, unless that replica is much busier
than the least-loaded one (more than ``affinity_abs`` requests more *and*
more than ``affinity_rel`` times as many; the same two-threshold rule as
SGLang's cache-aware router). Load is requests running plus waiting on the
server as last read, plus what this process sent since, and never less than
what this process has outstanding there; ties go to lower KV-cache usage.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import aiohttp
import anyio
import structlog
from prometheus_client.parser import text_string_to_metric_families

from agentbus.llm.types import ChatMessage

log = structlog.get_logger(__name__)

RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
KV_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")

#: leading prompt characters that name a prefix (more would only cost hashing)
PREFIX_CHARS = 4096
#: prefixes remembered per model (least recently used forgotten first)
AFFINITY_ENTRIES = 100_000


@dataclass
class ServerLoad:
    """What a server's /metrics said: requests running and waiting, KV-cache usage."""

    running: float = 0.0
    waiting: float = 0.0
    kv_usage: float = 0.0


def parse_metrics(text: str) -> ServerLoad:
    """The load figures of a vLLM ``/metrics`` page (summed over its models and engines)."""
    load = ServerLoad()
    kv: list[float] = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == RUNNING:
                load.running += sample.value
            elif sample.name == WAITING:
                load.waiting += sample.value
            elif sample.name in KV_USAGE:
                kv.append(sample.value)
    if kv:
        load.kv_usage = max(kv)
    return load


def root_url(base_url: str) -> str:
    """``http://h:8000/v1`` -> ``http://h:8000``: vLLM serves /health and /metrics at its root."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


@dataclass
class ReplicaState:
    """The health and load of one replica, as this process knows them."""

    url: str | None = None
    healthy: bool = True
    #: the last /metrics reading (None: never read, or the server has no /metrics)
    server: ServerLoad | None = None
    #: this process's outstanding requests when ``server`` was read
    outstanding_at_read: int = 0
    drained: int = 0
    last_check: float = 0.0

    def server_kv(self) -> float:
        """KV-cache usage as last read (0 when unknown)."""
        return self.server.kv_usage if self.server is not None else 0.0


class Choosable(Protocol):
    """What :func:`choose` needs of a replica (the router's ``Replica``)."""

    outstanding: int
    down_until: float
    state: ReplicaState


def load_of(replica: Choosable) -> float:
    """Requests on the replica: the server's count as read plus ours since, at least ours."""
    server = replica.state.server
    if server is None:
        return float(replica.outstanding)
    since = replica.outstanding - replica.state.outstanding_at_read
    return max(float(replica.outstanding), server.running + server.waiting + since)


def prefix_key(messages: Sequence[ChatMessage]) -> str:
    """A name for the prompt's leading part: the system prompt and the first user message."""
    head: list[str] = []
    for m in messages:
        head.append(f"{m.get('role')}\x00{m.get('content') or ''}")
        if m.get("role") == "user":
            break
    text = "\x01".join(head)[:PREFIX_CHARS]
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


@dataclass
class Affinity:
    """Which replica last served each prefix (LRU-bounded)."""

    abs_threshold: float = 16.0
    rel_threshold: float = 1.5
    entries: OrderedDict[str, int] = field(default_factory=OrderedDict)
    kept: int = 0
    moved: int = 0

    def remember(self, key: str, index: int) -> None:
        self.entries[key] = index
        self.entries.move_to_end(key)
        while len(self.entries) > AFFINITY_ENTRIES:
            self.entries.popitem(last=False)


def choose(
    replicas: Sequence[Choosable], key: str | None, affinity: Affinity, start: int = 0
) -> int:
    """Index of the replica for a request with prefix ``key``; see the module docstring.

    Usable replicas are healthy and not cooling down after failures; if none
    is, the one back soonest. ``start`` rotates the scan so ties spread.
    """
    now = time.monotonic()
    n = len(replicas)
    usable = [
        i
        for i in (((start + k) % n) for k in range(n))
        if replicas[i].state.healthy and replicas[i].down_until <= now
    ]
    if not usable:
        healthy = [i for i in range(n) if replicas[i].state.healthy] or list(range(n))
        return min(healthy, key=lambda i: replicas[i].down_until)
    loads = {i: load_of(replicas[i]) for i in usable}
    best = min(usable, key=lambda i: (loads[i], replicas[i].state.server_kv()))
    if key is None or n == 1:
        return best
    held = affinity.entries.get(key)
    if held is not None and held in loads:
        extra = loads[held] - loads[best]
        busier = extra > affinity.abs_threshold and loads[held] > affinity.rel_threshold * max(
            loads[best], 1.0
        )
        if not busier:
            affinity.kept += 1
            affinity.remember(key, held)
            return held
        affinity.moved += 1
    affinity.remember(key, best)
    return best


class HealthMonitor:
    """Reads /health and /metrics of a model's replicas every ``interval_s``; see above."""

    def __init__(
        self,
        replicas: Sequence[Any],
        *,
        interval_s: float,
        timeout_s: float = 2.0,
    ) -> None:
        self.replicas = [r for r in replicas if r.state.url is not None]
        self.interval_s = interval_s
        self.timeout_s = timeout_s

    async def run(self) -> None:
        """Check every replica now and then every ``interval_s``, until cancelled."""
        timeout = aiohttp.ClientTimeout(total=self.timeout_s)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while True:
                async with anyio.create_task_group() as tg:
                    for replica in self.replicas:
                        tg.start_soon(self.check, session, replica)
                await anyio.sleep(self.interval_s)

    async def check(self, session: aiohttp.ClientSession, replica: Any) -> None:
        """One round for one replica: health first, then (if healthy) its load."""
        state: ReplicaState = replica.state
        root = state.url
        assert root is not None
        state.last_check = time.monotonic()
        try:
            async with session.get(f"{root}/health") as resp:
                healthy = resp.status == 200
        except (aiohttp.ClientError, TimeoutError, OSError):
            healthy = False
        if healthy != state.healthy:
            if healthy:
                log.warning("llm.replica_back", replica=root)
            else:
                state.drained += 1
                log.warning("llm.replica_drained", replica=root)
            state.healthy = healthy
        if not healthy:
            return
        try:
            async with session.get(f"{root}/metrics") as resp:
                if resp.status != 200:
                    state.server = None
                    return
                text = await resp.text()
            outstanding = replica.outstanding
            state.server = parse_metrics(text)
            state.outstanding_at_read = outstanding
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError):
            state.server = None
