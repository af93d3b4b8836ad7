"""Episodes run in another process: a portable spec and the worker that runs it.

An :class:`~agentbus.core.episode.EpisodeSpec` holds live objects of the driver:
the environment factory (which may capture a search index) and one LLM
handle per actor (bound to the driver's router, its connection pools and its
cache). None of them can travel to another process, and none should: a
worker has its own environment setup, its own router (one pool per endpoint
per process) and its own cache. :class:`PortableSpec` keeps what names an
episode (its id, task, actor classes, the model spec of each actor, limits,
metadata, attempt and block) and :class:`EpisodeWorker` rebuilds the spec
against a :class:`WorkerContext` and runs it.

Nothing here imports a distributed engine; :mod:`agentbus.executors.ray_runtime` wraps
:class:`EpisodeWorker` in a Ray actor. The worker's context comes from a
picklable ``setup`` callable that the application provides (it knows how to
build the environment, the simulator and the router from the run config), so
the kernel stays free of the application.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from agentbus.core.actor import Actor
from agentbus.core.environment import Environment, Task
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.llm.types import LLM


class WorkerContext(Protocol):
    """What a worker process provides to rebuild episodes: environments and models."""

    def env_factory(self) -> Environment:
        """A fresh environment for one episode."""
        ...

    def client(self, model: str) -> LLM:
        """The worker's LLM handle for a model spec string."""
        ...

    def stats(self) -> dict[str, Any]:
        """The worker's LLM counters (``LLMRouter.stats`` shape), for the driver's summary."""
        ...


#: a picklable callable that opens a worker's context (environment, simulator, router)
WorkerSetup = Callable[[], AbstractAsyncContextManager[WorkerContext]]


@dataclass(frozen=True)
class PortableActor:
    """One actor of a portable spec: its slot, class (pickled by reference) and model."""

    slot: str
    factory: Callable[[], Actor]
    model: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class PortableSpec:
    """An episode spec without the driver's live objects; see the module docstring."""

    episode_id: str
    task: Task
    actors: tuple[PortableActor, ...]
    #: every other field of the spec (limits, metadata, attempt, block) by name, as it was
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, spec: EpisodeSpec) -> PortableSpec:
        """The portable form of ``spec``: each actor's model named by its spec string."""
        return cls(
            episode_id=spec.episode_id,
            task=spec.task,
            actors=tuple(
                PortableActor(a.slot, a.factory, _model_name(a.llm), a.name) for a in spec.actors
            ),
            settings=_settings(spec),
        )

    def build(self, context: WorkerContext) -> EpisodeSpec:
        """The runnable spec against this process's environment and models."""
        return EpisodeSpec(
            episode_id=self.episode_id,
            task=self.task,
            env_factory=context.env_factory,
            actors=[
                ActorSpec(
                    a.slot, a.factory, None if a.model is None else context.client(a.model), a.name
                )
                for a in self.actors
            ],
            **_settings(self.settings),
        )


#: the fields of an EpisodeSpec that a PortableSpec names itself or rebuilds on the worker
OWN_FIELDS = frozenset({"episode_id", "task", "env_factory", "actors"})


def _settings(source: EpisodeSpec | dict[str, Any]) -> dict[str, Any]:
    """The spec's other fields as keyword arguments, its metadata a copy of its own.

    Taken from the dataclass's own field list, so a setting added to
    :class:`EpisodeSpec` travels to the worker without being named here.
    """
    if isinstance(source, dict):
        out = dict(source)
    else:
        out = {f.name: getattr(source, f.name) for f in fields(source) if f.name not in OWN_FIELDS}
    out["metadata"] = dict(out["metadata"])
    return out


def _model_name(llm: LLM | None) -> str | None:
    """The spec string of a router handle (``RoutedLLM.spec``); None for no model."""
    if llm is None:
        return None
    spec = getattr(llm, "spec", None)
    if spec is None:
        raise TypeError(
            f"{llm!r} names no model spec: only router handles can run on another process"
        )
    return str(spec)


class EpisodeWorker:
    """Runs portable episodes concurrently on this process's event loop.

    The context (environment setup, simulator, router) is opened by one host
    task the worker owns, on the first call, and stays open until
    :meth:`stop`: async context managers with task groups must be entered
    and left by the same task, while the episodes run in the tasks of the
    calls that bring them. Every call returns the episode's outcome, from
    which the driver builds its record: records stream back one by one.
    """

    def __init__(self, setup: WorkerSetup) -> None:
        self._setup = setup
        self._context: WorkerContext | None = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._host: asyncio.Task[None] | None = None
        self._error: BaseException | None = None
        self.finished = 0

    async def start(self) -> int:
        """Open the context now (not at the first episode); returns this process's id."""
        await self._context_ready()
        return os.getpid()

    def pid(self) -> int:
        return os.getpid()

    async def run(self, portable: PortableSpec) -> dict[str, Any]:
        """Run one episode; its outcome as JSON (the driver builds and counts the record)."""
        context = await self._context_ready()
        outcome = await Episode(portable.build(context)).run()
        self.finished += 1
        return outcome.model_dump(mode="json")

    async def stats(self) -> dict[str, Any]:
        context = await self._context_ready()
        return {"episodes": self.finished, "llm": context.stats()}

    async def stop(self) -> None:
        """Close the context (router, simulator) and end the host task."""
        if self._stop is not None:
            self._stop.set()
        if self._host is not None:
            await asyncio.wait([self._host])

    async def _context_ready(self) -> WorkerContext:
        if self._ready is None:
            self._ready, self._stop = asyncio.Event(), asyncio.Event()
            # owned by this worker: stop() ends it; a worker lives as long as its process
            self._host = asyncio.get_running_loop().create_task(self._hold())
        await self._ready.wait()
        if self._context is None:
            raise RuntimeError(f"worker setup failed: {self._error!r}")
        return self._context

    async def _hold(self) -> None:
        assert self._ready is not None and self._stop is not None
        try:
            async with self._setup() as context:
                self._context = context
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # reported to every caller by _context_ready
            self._error = exc
        finally:
            self._ready.set()
            self._context = None
