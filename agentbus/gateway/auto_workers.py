"""``--agent-cmd CMD`` by default: workers when the command says it serves many episodes.

A process per episode pays the interpreter's start and the framework's
imports every time (seconds for a Python agent on an SDK); a worker pays
them once. agentbus cannot tell from a command line whether the program
loops over episodes, and guessing wrong either hangs (a per-episode command
waits for its stdin to end) or mixes episodes, so the command says so
itself, in a handshake that a per-episode command cannot answer by chance:

1. the first process starts as a worker candidate: ``AGENTBUS_WORKER=1``
   and ``AGENTBUS_WORKER_FD=N`` in its environment, an empty stdin, no
   episode's token (it can make no model call);
2. a worker prints ``{"agentbus_worker": 1}`` on stdout and then reads its
   episode lines from descriptor N (:mod:`agentbus.gateway.workers`); it
   becomes the pool's first worker, so its start is not paid twice;
3. anything else (it exits, its first JSON line is something else, it is
   silent past the time limit) means a process per episode, said on the
   console in one line; the candidate cost one start and saw no task.

``--agent-workers`` skips the handshake (episode lines on stdin, as before);
``--no-agent-workers`` skips it the other way. A blame replay runs a process
per replay unless told otherwise (``agentbus.app.external.replay_config``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from agentbus.core.inputs import json_object
from agentbus.gateway.context import AgentContext
from agentbus.gateway.runners import CHUNK, CommandAgent
from agentbus.gateway.workers import WorkerAgent, _stop, _Worker, is_hello

#: the console line when the command answered the handshake
AS_WORKERS = (
    "--agent-cmd answered the worker handshake: long-lived workers serve the episodes, "
    "up to {n} at once (started one at a time while episodes wait; --agent-processes), "
    "each paying its start once (--no-agent-workers: a process per episode)"
)
#: the console line when it did not
PER_EPISODE = (
    "--agent-cmd did not answer the worker handshake ({why}): a process per episode, "
    "each paying its start-up (docs/your-agent.md, Workers)"
)


class AutoCommandAgent:
    """Workers or a process per episode, as the command's handshake says (module docstring)."""

    def __init__(
        self,
        command: str,
        *,
        notice: Callable[[str], None] | None = None,
        workers: int | None = None,
        **options: Any,
    ) -> None:
        """``workers``: how many may run at once (else ``max_processes``, as per episode)."""
        pool = {**options, "max_processes": workers or options.get("max_processes", 16)}
        self.workers = WorkerAgent(command, channel="fd", **pool)
        self.label = command
        self.options = options
        self.notice = notice or (lambda line: None)
        self.per_episode: CommandAgent | None = None
        #: "workers" or "per episode" once the first episode has asked; None before
        self.mode: str | None = None
        self._deciding = anyio.Lock()

    @property
    def started(self) -> int:
        """Processes started so far, the candidate included."""
        return self.workers.started + (self.per_episode.started if self.per_episode else 0)

    async def run(self, task: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
        if self.mode is None:
            async with self._deciding:
                if self.mode is None:
                    await self._decide()
        if self.per_episode is not None:
            return await self.per_episode.run(task, ctx)
        return await self.workers.run(task, ctx)

    async def _decide(self) -> None:
        """Start the candidate and read its first word (see the module docstring)."""
        async with self.workers.limiter:
            worker = await self.workers._start()
            why = await self._hello(worker)
        if why is None:
            self.workers.idle.append(worker)
            self.mode = "workers"
            self.notice(AS_WORKERS.format(n=self.workers.limiter.total_tokens))
            return
        with anyio.CancelScope(shield=True):
            await _stop(worker)
        self.per_episode = CommandAgent(self.label, **self.options)
        self.mode = "per episode"
        self.notice(PER_EPISODE.format(why=why))

    async def _hello(self, worker: _Worker) -> str | None:
        """None when the candidate says hello; otherwise what it did instead."""
        stdout = worker.proc.stdout
        assert stdout is not None
        printed = 0
        with anyio.move_on_after(self.workers.time_limit_s):
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._stderr, worker, tg.cancel_scope)
                try:
                    while raw := await stdout.readline():
                        printed += len(raw)
                        value = json_object(raw)
                        if value is not None:
                            tg.cancel_scope.cancel()
                            return None if is_hello(value) else "its first JSON line was no hello"
                        worker.out.add(raw)  # a log line, to agent.log
                        if printed > self.workers.output_cap:
                            break
                except ValueError:  # a line past the result cap
                    pass
                tg.cancel_scope.cancel()
            return "it printed no hello line" if printed else "it exited without a hello line"
        return f"no hello within {self.workers.time_limit_s:g}s"

    async def _stderr(self, worker: _Worker, scope: anyio.CancelScope) -> None:
        """The candidate's stderr, read until its end or past the output cap."""
        stream = worker.proc.stderr
        assert stream is not None
        while chunk := await stream.read(CHUNK):
            worker.err.add(chunk)
            if worker.err.total > self.workers.output_cap:
                scope.cancel()  # then: "it printed no hello line"
                return

    async def aclose(self) -> None:
        await self.workers.aclose()
        if self.per_episode is not None:
            await self.per_episode.aclose()


__all__ = ["AS_WORKERS", "PER_EPISODE", "AutoCommandAgent"]
