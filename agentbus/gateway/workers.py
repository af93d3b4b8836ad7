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
(:mod:`agentbus.gateway.isolation`; CPU seconds are limited per episode,
from its cgroup, not per process, where they add up over a worker's life),
each in its own private directory for
its life: what it keeps there, or in memory, the episodes it serves later
see, as a worker is meant to; no other worker and no replay does. A worker
that crashes, runs past the time limit, prints past a cap or answers with
something that is no result fails that episode and is replaced by a fresh
one for the next.

Each worker gets ``AGENTBUS_WORKER=1``. With the fd channel (the default,
:mod:`agentbus.gateway.auto_workers`) its stdin is empty and the episode
lines come on the pipe named by ``AGENTBUS_WORKER_FD``; a worker that reads
that descriptor when it is set, and stdin otherwise, serves both channels.
A line :data:`HELLO` on stdout (the handshake: "I serve episode after
episode") is never taken for a result.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any, Literal

import anyio
import orjson

from agentbus.core.inputs import json_object
from agentbus.gateway.agent_log import STDERR_TAIL, TRACEBACK_CAP, AgentLog, Tail, failure_text
from agentbus.gateway.context import AgentContext
from agentbus.gateway.runners import (
    CHUNK,
    PASSED_ENV,
    AgentFailed,
    CommandProcesses,
    _result,
    _size,
)
from agentbus.gateway.sandbox import Launch

#: the key of the line a worker prints to say it serves episode after episode
HELLO = "agentbus_worker"
#: where a worker reads its episode lines: stdin, or the pipe named by AGENTBUS_WORKER_FD
Channel = Literal["stdin", "fd"]


class _Worker:
    """One running worker process, where its episode lines go and the tail of its stderr."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        launch: Launch,
        lines: asyncio.StreamWriter,
        log: AgentLog,
        number: int,
    ) -> None:
        self.proc = proc
        self.launch = launch
        self.lines = lines
        self.number = number
        self.out = log.sink(f"worker {number} stdout")  # its log lines (not its results)
        self.err = Tail(TRACEBACK_CAP, "stderr", log.sink(f"worker {number}"))
        self.served = 0

    def serving(self, task_id: str) -> None:
        """Head its agent.log lines with the task it now serves."""
        assert self.err.sink is not None
        self.err.sink.source = f"worker {self.number} task {task_id}"
        self.out.source = f"worker {self.number} task {task_id} stdout"


def is_hello(value: dict[str, Any]) -> bool:
    """Whether a JSON object line from a worker is its handshake, not a result."""
    return HELLO in value and "answer" not in value and "reward" not in value


class WorkerAgent(CommandProcesses):
    """A pool of long-lived command agents (see the module docstring)."""

    cpu_limited = False  # no rlimit: CPU seconds add up over a worker's life (_exchange)

    def __init__(self, command: str, *, channel: Channel = "stdin", **options: Any) -> None:
        super().__init__(command, **options)
        self.channel = channel
        self.idle: list[_Worker] = []
        self._starting = anyio.Lock()  # one start at a time: the pool grows while needed
        self._changed = anyio.Event()  # a worker came back, or a start ended

    async def _start(self) -> _Worker:
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        env["AGENTBUS_WORKER"] = "1"
        limit = self.result_cap + 1  # asyncio's line limit: a longer line is refused
        if self.channel == "stdin":
            proc, launch = await self._spawn(env, limit=limit)
            assert proc.stdin is not None
            return _Worker(proc, launch, proc.stdin, self.log, self.started)
        read, write = os.pipe()
        try:
            env["AGENTBUS_WORKER_FD"] = str(read)
            proc, launch = await self._spawn(
                env, limit=limit, stdin=asyncio.subprocess.DEVNULL, extra_fds=(read,)
            )
        except BaseException:
            os.close(write)
            raise
        finally:
            os.close(read)
        return _Worker(proc, launch, await _pipe_writer(write), self.log, self.started)

    async def _take(self) -> _Worker:
        """An idle worker, or a new one when no start is under way (else wait for either).

        Starting one worker at a time keeps a run's first burst of episodes from
        starting ``max_processes`` interpreters at once, all importing their
        framework on the same CPUs: the pool grows as long as episodes wait.
        """
        while not self.idle:
            if not self._starting.locked():
                async with self._starting:
                    try:
                        return await self._start()
                    finally:
                        self._signal()
            await self._changed.wait()
        return self.idle.pop()

    def _signal(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def run(self, task: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
        async with self.limiter:
            worker = await self._take()
            healthy = False
            try:
                result = await self._exchange(worker, task, ctx)
                healthy = True
                return result
            finally:
                if healthy and worker.proc.returncode is None:
                    self.idle.append(worker)
                    self._signal()
                else:
                    with anyio.CancelScope(shield=True):
                        await _stop(worker)
                    self._signal()

    async def _exchange(
        self, worker: _Worker, task: dict[str, Any], ctx: AgentContext
    ) -> dict[str, Any]:
        line = ctx.request(task)
        worker.serving(ctx.task_id)
        proc = worker.proc
        found: list[dict[str, Any]] = []
        failed: list[str] = []
        cpu: list[str] = []  # its tree's CPU time in this episode past the limit: killed
        try:
            with anyio.fail_after(self.time_limit_s):
                worker.lines.write(orjson.dumps(line) + b"\n")
                await worker.lines.drain()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._stderr, worker)
                    group = worker.launch.group
                    since = (group.usage_ns() or 0) if group is not None else 0
                    tg.start_soon(self._watch_cpu, proc, worker.launch, cpu, since)
                    await self._answer(worker, found, failed)
                    tg.cancel_scope.cancel()
        except TimeoutError:
            raise AgentFailed(
                f"agent worker ran past its time limit of {self.time_limit_s:g}s; killed"
            ) from None
        except ConnectionError:  # it had exited: its stdin is closed
            found.clear()
        if cpu:
            await _stop(worker)
            raise AgentFailed(f"agent worker: {cpu[0]} in one episode; killed")
        if failed:
            raise AgentFailed(failed[0])
        if not found:
            await _stop(worker)
            tail = failure_text(worker.err.text())
            raise AgentFailed(
                f"agent worker exited with status {proc.returncode} before its result"
                + (f": {tail}" if tail else "")
                + self._why(worker.launch, tail[-STDERR_TAIL:])
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
            if value is None:
                worker.out.add(raw)
            elif not is_hello(value):
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
    with contextlib.suppress(Exception):
        worker.lines.close()
    worker.launch.kill(proc.pid)
    with anyio.move_on_after(30):
        for stream, tail in ((proc.stdout, worker.out), (proc.stderr, worker.err)):
            if stream is not None:
                with contextlib.suppress(Exception):
                    while chunk := await stream.read(CHUNK):
                        tail.add(chunk)
        await proc.wait()
    worker.out.flush()
    worker.err.flush()
    worker.launch.close()


async def _pipe_writer(fd: int) -> asyncio.StreamWriter:
    """An asyncio writer on the parent's end of a worker's episode pipe (as its stdin's is)."""
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop), pipe
    )
    return asyncio.StreamWriter(transport, protocol, None, loop)


__all__ = ["HELLO", "Channel", "WorkerAgent", "is_hello"]
