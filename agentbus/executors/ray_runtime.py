"""The Ray executor: the runtime's episodes run on Ray actors, records come back.

:class:`RayRuntime` is a :class:`~agentbus.executors.runtime.Runtime` whose
``run_record`` sends the episode to a Ray actor (an
:class:`~agentbus.executors.remote.EpisodeWorker`, each with its own event loop running
many episodes at once) instead of running it here. Everything else stays on
the driver: the work queue and adaptive scheduler that hand out task blocks,
the event hub, the run store, the attribution service and the live server.
Each record is the return value of its episode's call, so records stream
back one by one as episodes end.

Sharding is by task: the first episode of a task picks the least-loaded live
worker, and every later episode of that task (its other coalitions, its
retries, its best-combination run) goes to the same one, so the calls the
coalitions share are made once in that worker's cache and the task's prompt
prefix stays warm on the servers that worker talks to.

A worker that dies (its process killed, its node lost) fails every call in
flight on it with a ``RayActorError``; those episodes never produced a
record, so they are sent again, with the same attempt number, to another
worker. The dead worker's tasks are re-sharded on their next episode and a
replacement worker is started in its place (up to ``max_replacements``).
Nothing is counted twice: a cell gets at most one record per attempt, and
the counting rule (:class:`~agentbus.core.record.RecordBook`) keeps one per cell.

Ray is optional (``pip install -e '.[ray]'``); it is imported only here.
"""

from __future__ import annotations

import importlib.util
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog

from agentbus.core.episode import EpisodeSpec
from agentbus.core.errors import InfraError, UserError
from agentbus.core.outcome import Outcome
from agentbus.executors.remote import EpisodeWorker, PortableSpec, WorkerSetup
from agentbus.executors.runtime import Runtime

log = structlog.get_logger(__name__)

INSTALL_HINT = "--executor ray needs Ray: pip install -e '.[ray]' (or pip install 'ray>=2.9')"

#: how long workers may take to start (scheduling on the cluster, setting up)
START_TIMEOUT_S = 180.0


def require_ray() -> None:
    """A one-line UserError saying how to install Ray, unless it is installed."""
    if importlib.util.find_spec("ray") is None:
        raise UserError(INSTALL_HINT)


def import_ray() -> Any:
    """The ``ray`` module, or a one-line UserError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return ray


@dataclass
class WorkerSlot:
    """One Ray actor of the pool and what the driver knows about it."""

    index: int
    handle: Any
    alive: bool = True
    in_flight: int = 0
    tasks: set[str] = field(default_factory=set)


class RayRuntime(Runtime):
    """A runtime whose episodes run on a pool of Ray actors; see the module docstring.

    Use as ``async with RayRuntime(...)``: entering connects to Ray (``address``,
    or a local instance started for the run) and starts the workers; leaving
    stops them. ``options`` are the :class:`Runtime`'s (``max_concurrency`` is
    episodes in flight over all workers, ``hub``, ...). Records are built and
    published here, on the driver, from the outcome each worker returns.
    """

    def __init__(
        self,
        setup: WorkerSetup,
        *,
        workers: int = 2,
        address: str | None = None,
        max_replacements: int | None = None,
        worker_concurrency: int = 10_000,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        if workers < 1:
            raise UserError("--workers must be at least 1")
        self.setup = setup
        self.workers = workers
        self.address = address
        self.max_replacements = workers * 2 if max_replacements is None else max_replacements
        self.worker_concurrency = worker_concurrency
        self.pool: list[WorkerSlot] = []
        self.owner: dict[str, WorkerSlot] = {}
        self.lost = 0
        self.resent = 0
        self.replaced = 0
        self.name = f"agentbus-{uuid.uuid4().hex[:8]}"
        self._ray: Any = None
        self._started_ray = False
        self._actor_cls: Any = None

    # -- lifecycle ------------------------------------------------------------

    async def __aenter__(self) -> RayRuntime:
        ray = self._ray = import_ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": "ERROR",
                "configure_logging": False,
            }
            if self.address:
                options["address"] = self.address
            else:  # a new local instance (never a cluster that happens to run here),
                # with room for every worker even on a small machine
                options["address"] = "local"
                options["num_cpus"] = max(self.workers, os.cpu_count() or 1)
            try:
                ray.init(**options)  # on this thread: Ray sets signal handlers on the main one
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = self.address or "a local instance"
                raise InfraError(f"cannot start or reach Ray at {where}: {exc}") from None
            self._started_ray = True
        self._actor_cls = ray.remote(EpisodeWorker)
        for _ in range(self.workers):
            self._spawn()
        try:
            with anyio.fail_after(START_TIMEOUT_S):
                for slot in list(self.pool):
                    await slot.handle.start.remote()
        except TimeoutError:
            raise InfraError(
                f"Ray did not start {self.workers} workers within {START_TIMEOUT_S:g}s "
                "(each needs 1 CPU on the cluster)"
            ) from None
        except ray.exceptions.RayTaskError as exc:
            raise InfraError(f"a Ray worker could not set up: {exc.cause}") from None
        log.info("ray.workers_started", workers=self.workers, address=self.address)
        return self

    async def __aexit__(self, *exc: object) -> None:  # the workers stop whatever ended the run
        ray = self._ray
        with anyio.CancelScope(shield=True):
            for slot in self.pool:
                if slot.alive:
                    try:
                        with anyio.move_on_after(10):
                            await slot.handle.stop.remote()
                    except ray.exceptions.RayError:
                        pass
                    ray.kill(slot.handle, no_restart=True)
            if self._started_ray:
                await anyio.to_thread.run_sync(ray.shutdown)

    def _spawn(self) -> WorkerSlot:
        index = len(self.pool)
        handle = self._actor_cls.options(
            name=f"{self.name}-worker-{index}",
            num_cpus=1,
            max_concurrency=self.worker_concurrency,
            max_restarts=0,
        ).remote(self.setup)
        slot = WorkerSlot(index, handle)
        self.pool.append(slot)
        return slot

    # -- sharding -------------------------------------------------------------

    def worker_for(self, task_id: str) -> WorkerSlot:
        """The task's worker: the one that has it, else the least-loaded live one."""
        slot = self.owner.get(task_id)
        if slot is not None and slot.alive:
            return slot
        live = [s for s in self.pool if s.alive]
        if not live:
            raise InfraError(
                f"every Ray worker died ({self.lost} lost, {self.replaced} replaced; "
                f"at most {self.max_replacements} replacements)"
            )
        slot = min(live, key=lambda s: (s.in_flight, len(s.tasks), s.index))
        slot.tasks.add(task_id)
        self.owner[task_id] = slot
        return slot

    def worker_lost(self, slot: WorkerSlot, error: BaseException) -> None:
        """Take a dead worker out; its tasks move on their next episode; replace it."""
        if not slot.alive:
            return
        slot.alive = False
        self.lost += 1
        for task in slot.tasks:
            if self.owner.get(task) is slot:
                del self.owner[task]
        log.warning("ray.worker_lost", worker=slot.index, error=str(error)[:200])
        if self.replaced < self.max_replacements:
            self.replaced += 1
            self._spawn()

    def summary(self) -> dict[str, Any]:
        """For the results: how the work was spread and what was lost."""
        return {
            "executor": "ray",
            "workers": self.workers,
            "workers_lost": self.lost,
            "workers_replaced": self.replaced,
            "episodes_resent": self.resent,
            "tasks_per_worker": [len(s.tasks) for s in self.pool],
        }

    async def worker_stats(self) -> list[dict[str, Any]]:
        """Each live worker's episode count and LLM counters."""
        out = []
        for slot in self.pool:
            if slot.alive:
                try:
                    out.append(await slot.handle.stats.remote())
                except self._ray.exceptions.RayError:
                    continue
        return out

    # -- running --------------------------------------------------------------

    async def episode_outcome(self, spec: EpisodeSpec) -> Outcome:
        """Run the episode on its task's worker, again elsewhere if that worker dies."""
        ray = self._ray
        portable = PortableSpec.of(spec)
        started = time.monotonic()
        while True:
            slot = self.worker_for(spec.task.id)
            slot.in_flight += 1
            try:
                data = await slot.handle.run.remote(portable)
            except ray.exceptions.RayActorError as exc:
                self.worker_lost(slot, exc)
                self.resent += 1
                continue
            except ray.exceptions.RayTaskError as exc:  # a bug on the worker, not the agent's
                error = f"Ray worker error: {exc.cause!r}"
                return Outcome(
                    reason=error,
                    error=error,
                    error_kind="actor",
                    latency_s=time.monotonic() - started,
                )
            finally:
                slot.in_flight -= 1
            return Outcome.model_validate(data)
