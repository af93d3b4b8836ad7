"""``--agent-cmd CMD --agent-workers``: long-lived agent processes, one episode at a time each.

A process per episode pays the interpreter's start and the imports of the
agent's framework every time (seconds for a Python agent importing an SDK,
benchmarks/README.md); a worker pays them once. The protocol is JSON lines:
for each episode agentbus writes one line to the worker's stdin, the same
object an ``--agent-url`` service is posted::

    {"task": {...}, "base_url": "...", "anthropic_base_url": "...",
     "api_key": "<this episode's token>", "off_slots": ["critic"]}

and the worker answers with one JSON object line on stdout, its result for
that task (other lines on stdout are log lines and are skipped). The token
and base URL are fresh per episode and stop working when it ends, so a
worker must build its clients from each line, not from its environment
(which carries no token). Workers run isolated like every command agent
(:mod:`agentbus.gateway.isolation`; CPU seconds are not limited, since
they add up over a worker's life), each in its own private directory for
its life: what it keeps there, or in memory, the episodes it serves later
see, as a worker is meant to; no other worker and no replay does. A worker
that crashes, runs past the time limit, prints past a cap or answers with
something that is no result fails that episode and is replaced by a fresh
one for the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

import anyio
import orjson

from agentbus.core.inputs import json_object
from agentbus.gateway.context import AgentContext
from agentbus.gateway.runners import (
    CHUNK,
    PASSED_ENV,
    STDERR_TAIL,
    AgentFailed,
    CommandProcesses,
    _kill_group,
    _result,
    _size,
    _Tail,
)
from agentbus.gateway.sandbox import Launch


class _Worker:
    """One running worker process and the tail of its stderr."""

    def __init__(self, proc: asyncio.subprocess.Process, launch: Launch) -> None:
        self.proc = proc
        self.launch = launch
        self.err = _Tail(STDERR_TAIL * 4, "stderr")
        self.served = 0


class WorkerAgent(CommandProcesses):
    """A pool of long-lived command agents (see the module docstring)."""

    cpu_limited = False  # CPU seconds add up over a worker's life

    def __init__(self, command: str, **options: Any) -> None:
        super().__init__(command, **options)
        self.idle: list[_Worker] = []

    async def _start(self) -> _Worker:
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        env["AGENTBUS_WORKER"] = "1"
        # asyncio's line limit: a longer line is refused while it is read
        return _Worker(*await self._spawn(env, limit=self.result_cap + 1))

    async def run(self, task: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
        async with self.limiter:
            worker = self.idle.pop() if self.idle else await self._start()
            healthy = False
            try:
                result = await self._exchange(worker, task, ctx)
                healthy = True
                return result
            finally:
                if healthy and worker.proc.returncode is None:
                    self.idle.append(worker)
                else:
                    with anyio.CancelScope(shield=True):
                        await _stop(worker)

    async def _exchange(
        self, worker: _Worker, task: dict[str, Any], ctx: AgentContext
    ) -> dict[str, Any]:
        line = ctx.request(task)
        proc = worker.proc
        assert proc.stdin is not None and proc.stdout is not None
        found: list[dict[str, Any]] = []
        failed: list[str] = []
        try:
            with anyio.fail_after(self.time_limit_s):
                proc.stdin.write(orjson.dumps(line) + b"\n")
                await proc.stdin.drain()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._stderr, worker)
                    await self._answer(worker, found, failed)
                    tg.cancel_scope.cancel()
        except TimeoutError:
            raise AgentFailed(
                f"agent worker ran past its time limit of {self.time_limit_s:g}s; killed"
            ) from None
        except ConnectionError:  # it had exited: its stdin is closed
            found.clear()
        if failed:
            raise AgentFailed(failed[0])
        if not found:
            await _stop(worker)
            tail = worker.err.text()[-STDERR_TAIL:].strip()
            raise AgentFailed(
                f"agent worker exited with status {proc.returncode} before its result"
                + (f": {tail}" if tail else "")
                + self._why(worker.launch, tail)
            )
        worker.served += 1
        return _result(found[0], "agent worker")

    async def _answer(
        self, worker: _Worker, found: list[dict[str, Any]], failed: list[str]
    ) -> None:
        """Read stdout up to the first JSON object line (the result), or note the failure."""
        stdout = worker.proc.stdout
        assert stdout is not None
        printed = 0
        while True:
            try:
                raw = await stdout.readline()
            except ValueError:  # asyncio's limit: the line did not end within result_cap
                failed.append(
                    f"agent worker's result line is longer than the result cap of "
                    f"{_size(self.result_cap)}; killed"
                )
                return
            if not raw:
                return  # the worker ended
            printed += len(raw)
            if printed > self.output_cap:
                failed.append(
                    f"agent worker printed more than the output cap of "
                    f"{_size(self.output_cap)} on stdout for one task; killed"
                )
                return
            value = json_object(raw)
            if value is not None:
                found.append(value)
                return

    @staticmethod
    async def _stderr(worker: _Worker) -> None:
        stream = worker.proc.stderr
        assert stream is not None
        while chunk := await stream.read(CHUNK):
            worker.err.add(chunk)

    async def aclose(self) -> None:
        workers, self.idle = self.idle, []
        for worker in workers:
            with anyio.CancelScope(shield=True):
                await _stop(worker)
        await super().aclose()


async def _stop(worker: _Worker) -> None:
    """Kill a worker's process group and wait for it (its pipes read to their end)."""
    proc = worker.proc
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
    _kill_group(proc.pid)
    with anyio.move_on_after(30):
        for stream, tail in ((proc.stdout, None), (proc.stderr, worker.err)):
            if stream is not None:
                with contextlib.suppress(Exception):
                    while chunk := await stream.read(CHUNK):
                        if tail is not None:
                            tail.add(chunk)
        await proc.wait()
    worker.launch.close()


__all__ = ["WorkerAgent"]
