"""The three ways an external agent runs: in process, as a command, as an HTTP service.

Each runner turns (task, :class:`AgentContext`) into the agent's result dict.
An agent that crashes, runs past its time limit or prints no result ends its
episode as a task failure (:class:`AgentFailed`, reward 0, the reason kept in
the record). A service that cannot be reached is an infrastructure failure:
the episode is retried, not counted.

A command agent gets a clean environment: the variables of
:data:`PASSED_ENV` (PATH, HOME, locale...) and the gateway's, nothing else, so
no provider key in agentbus's own environment can reach it. Each command runs
in its own process group; on its time limit (or when the episode is cancelled)
the whole group is killed, children included. Each process starts in a fresh
private directory of its own (:mod:`agentbus.gateway.sandbox`), never
agentbus's working directory: what one episode leaves there, no other
episode and no replay sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from traceback import format_exc
from typing import Any, Protocol

import aiohttp
import anyio
import orjson

from agentbus.core.errors import InfraError, UserError
from agentbus.core.inputs import json_object
from agentbus.gateway.agent_log import (
    AGENT_TASK,
    STDERR_TAIL,
    TRACEBACK_CAP,
    AgentLog,
    Capture,
    Tail,
    capture,
    failure_text,
)
from agentbus.gateway.context import AgentContext
from agentbus.gateway.deadline import agent_deadline
from agentbus.gateway.isolation import NONE, Isolation
from agentbus.gateway.sandbox import Launch, Sandbox
from agentbus.gateway.scorers import load_callable

#: variables a command agent inherits from agentbus's environment (all others are dropped)
PASSED_ENV: tuple[str, ...] = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ",
    "PYTHONPATH", "VIRTUAL_ENV", "NODE_PATH", "SYSTEMROOT",
)  # fmt: skip

MIB = 1024 * 1024
#: bytes a command agent may print on stdout, and again on stderr (--agent-output-mb)
OUTPUT_CAP = 64 * MIB
#: the longest result line read from a command agent's stdout
RESULT_CAP = 1 * MIB
#: read size of a command's output
CHUNK = 64 * 1024


class AgentFailed(Exception):
    """The agent produced no usable result; the episode is a task failure."""


class AgentRunner(Protocol):
    """Runs one episode of the agent."""

    label: str

    async def run(self, task: dict[str, Any], ctx: AgentContext) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


def _result(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise AgentFailed(f"{where} returned {type(value).__name__}, not a result object")
    if "answer" not in value and "reward" not in value:
        raise AgentFailed(f"{where}'s result has neither 'answer' nor 'reward'")
    return dict(value)


class CallableAgent:
    """``--agent MODULE:FUNC``: ``async def FUNC(task, ctx) -> dict`` in this process."""

    def __init__(
        self, name: str, time_limit_s: float | None = None, log: AgentLog | None = None
    ) -> None:
        self.fn = load_callable(name, "--agent")
        if not inspect.iscoroutinefunction(self.fn):
            raise UserError(f"--agent {name!r}: must be an async function (async def)")
        self.label = name
        self.time_limit_s = time_limit_s
        self.log = log  # its frameworks' logs and prints go there (agent_log.capture)
        self._capture = contextlib.ExitStack()
        self._taken: Capture | None = None

    async def run(self, task: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
        limit = self.time_limit_s if self.time_limit_s is not None else float("inf")
        if self.log is not None:
            if self._taken is None:
                self._taken = self._capture.enter_context(capture(self.log))
            self._taken.adopt()  # loggers its framework made since
        token = AGENT_TASK.set(ctx.task_id)
        try:
            with agent_deadline(limit):  # less its calls' waits for a model slot
                value = await self.fn(task, ctx)
        except TimeoutError:
            raise AgentFailed(f"agent ran past its time limit of {limit:g}s") from None
        except (AgentFailed, InfraError):
            raise
        except Exception as exc:
            raise AgentFailed(f"agent raised {type(exc).__name__}: {exc}\n{format_exc()}") from None
        finally:
            AGENT_TASK.reset(token)
            with anyio.CancelScope(shield=True):
                await ctx.aclose()
        return _result(value, self.label)

    async def aclose(self) -> None:
        self._capture.close()


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last non-empty line of ``text`` that parses as a JSON object."""
    for line in reversed(text.splitlines()):
        value = json_object(line.strip())  # None for a blank or log line
        if value is not None:
            return value
    return None


def child_env(ctx: AgentContext, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The command's environment: :data:`PASSED_ENV` from ``base`` plus the gateway's."""
    source = os.environ if base is None else base
    env = {k: source[k] for k in PASSED_ENV if k in source}
    env.update(ctx.env())
    return env


def command_argv(command: str) -> list[str]:
    """``--agent-cmd``'s words as an argv; a user error when it has none or will not split."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UserError(f"--agent-cmd {command!r}: {exc}") from None
    if not argv:
        raise UserError("--agent-cmd is empty")
    return argv


class CommandProcesses:
    """What every ``--agent-cmd`` runner shares: its argv, its limits and how a process starts.

    A process gets the ``env`` it is given (never agentbus's own environment),
    runs in the isolation's sandbox in a process group of its own, and at most
    ``max_processes`` run at once (:attr:`limiter`, held by the subclasses).
    """

    #: whether the isolation's CPU-seconds limit applies (not to long-lived workers)
    cpu_limited = True

    def __init__(
        self,
        command: str,
        *,
        time_limit_s: float = 300.0,
        max_processes: int = 16,
        cwd: Path | None = None,
        isolation: Isolation = NONE,
        output_cap: int = OUTPUT_CAP,
        result_cap: int = RESULT_CAP,
        log: AgentLog | None = None,
    ) -> None:
        self.argv = command_argv(command)
        self.log = log if log is not None else AgentLog(None)  # where its stderr lines go
        self.label = command
        self.time_limit_s = time_limit_s
        self.cwd = cwd
        self.isolation = isolation if self.cpu_limited else replace(isolation, cpu_s=None)
        self.episode_cpu_s = isolation.cpu_s  # CPU seconds of one episode (a worker's too)
        self.output_cap = output_cap
        self.result_cap = result_cap
        self.limiter = anyio.CapacityLimiter(max_processes)
        self.started = 0
        launch_dir = self.cwd if self.cwd is not None else Path.cwd()
        view_env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        self.sandbox = Sandbox(self.isolation, self.argv, launch_dir, view_env)

    async def _spawn(
        self, env: dict[str, str], extra_fds: tuple[int, ...] = (), **options: Any
    ) -> tuple[asyncio.subprocess.Process, Launch]:
        """Start the command with piped stdio in a fresh private directory of its own.

        A start that fails is the agent's failure; ``extra_fds`` stay open in the child. The
        caller closes the :class:`Launch` once the process has ended (its group, its folder).
        """
        launch = self.sandbox.launch(env)
        options.setdefault("stdin", asyncio.subprocess.PIPE)
        try:
            proc = await asyncio.create_subprocess_exec(
                *launch.argv,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=launch.env,
                cwd=launch.cwd,
                pass_fds=(*launch.fds, *extra_fds),
                start_new_session=True,  # its own process group, killed as one
                preexec_fn=launch.preexec,
                **options,
            )
        except OSError as exc:
            launch.close()
            raise AgentFailed(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None
        self.started += 1
        return proc, launch

    def _why(self, launch: Launch, stderr: str) -> str:
        """What the sandbox adds to a failure: a memory limit reached, a path it hides."""
        if launch.group is not None and launch.group.out_of_memory():
            return (
                f" (the agent's processes reached their memory limit of "
                f"{self.isolation.memory_mb} MiB, --agent-memory-mb; files in its private "
                "directory count)"
            )
        return self.sandbox.explain(stderr)

    async def _watch_cpu(
        self, proc: asyncio.subprocess.Process, launch: Launch, over: list[str], since: int = 0
    ) -> None:
        """Kill the tree once its CPU time (all its processes, since ``since`` ns) passes the
        limit of one episode."""
        limit = self.episode_cpu_s
        if limit is None or launch.group is None or launch.group.usage_ns() is None:
            return
        while proc.returncode is None:
            used = (launch.group.usage_ns() or 0) - since
            if used > limit * 1e9:
                over.append(f"its processes used more than {limit:g}s of CPU time together")
                launch.kill(proc.pid)
                return
            await anyio.sleep(0.25)

    async def aclose(self) -> None:
        self.sandbox.close()


class CommandAgent(CommandProcesses):
    """``--agent-cmd CMD``: one process per episode, task JSON in, result JSON out.

    What it prints is read in chunks and bounded: past ``output_cap`` bytes on
    stdout or stderr it is killed (the reason names the cap); only the last
    ``result_cap`` bytes of stdout are kept, which must hold the result line,
    and of stderr the record keeps its last traceback whole (else its last
    :data:`STDERR_TAIL` characters); both go to agent.log line by line.
    """

    async def run(self, task: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
        async with self.limiter:
            return await self._run(task, ctx)

    async def _run(self, task: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
        proc, launch = await self._spawn(child_env(ctx))
        source = f"process {self.started} task {ctx.task_id}"
        out = Tail(self.result_cap + 1, "stdout", self.log.sink(f"{source} stdout"))
        err = Tail(TRACEBACK_CAP, "stderr", self.log.sink(source))
        over: list[str] = []
        cpu: list[str] = []
        try:
            with agent_deadline(self.time_limit_s):  # less its calls' waits for a model slot
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._feed, proc, orjson.dumps(task) + b"\n")
                    tg.start_soon(self._drain, proc.stdout, out, tg.cancel_scope, over)
                    tg.start_soon(self._drain, proc.stderr, err, tg.cancel_scope, over)
                    tg.start_soon(self._watch_cpu, proc, launch, cpu)
                if over:
                    raise AgentFailed(
                        f"agent command printed more than the output cap of "
                        f"{_size(self.output_cap)} on {over[0]}; killed"
                    )
                await proc.wait()
        except TimeoutError:
            raise AgentFailed(
                f"agent command ran past its time limit of {self.time_limit_s:g}s; killed"
            ) from None
        finally:
            launch.kill(proc.pid)  # at its limit, past a cap, or the children it left behind
            with anyio.CancelScope(shield=True):
                await _reap(proc)
                why = self._why(launch, err.text()[-STDERR_TAIL:])
                launch.close()
                out.flush()
                err.flush()
        if cpu:
            raise AgentFailed(f"agent command: {cpu[0]}; killed")
        if proc.returncode != 0:
            tail = failure_text(err.text())
            raise AgentFailed(
                f"agent command exited with status {proc.returncode}"
                + (f": {tail}" if tail else "")
                + why
            )
        stdout = out.text()
        value = last_json_object(stdout)
        if value is None:
            if out.dropped and "\n" not in stdout.rstrip("\n"):
                raise AgentFailed(
                    f"agent command's result line is longer than the result cap of "
                    f"{_size(self.result_cap)}"
                )
            raise AgentFailed("agent command printed no JSON object line on stdout" + why)
        return _result(value, "agent command")

    @staticmethod
    async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
        stdin = proc.stdin
        assert stdin is not None
        with contextlib.suppress(ConnectionError):  # it may exit without reading
            stdin.write(data)
            await stdin.drain()
            stdin.close()

    async def _drain(
        self,
        stream: asyncio.StreamReader | None,
        tail: Tail,
        scope: anyio.CancelScope,
        over: list[str],
    ) -> None:
        """Read ``stream`` to its end; past the output cap, note it and stop the reading."""
        assert stream is not None
        while chunk := await stream.read(CHUNK):
            tail.add(chunk)
            if tail.total > self.output_cap:
                over.append(tail.name)
                scope.cancel()
                return


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait for a killed command, reading what is left in its pipes.

    asyncio's ``wait()`` returns only once the transport has seen both pipes
    close, and a pipe whose reader stopped at a full buffer is never read to
    its end: the output is discarded here so the end is seen.
    """
    with anyio.move_on_after(30):
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                while await stream.read(CHUNK):
                    pass
        await proc.wait()


async def _read_upto(stream: aiohttp.StreamReader, limit: int) -> bytes:
    """A body, read until its end or until ``limit`` bytes (whichever comes first)."""
    data = bytearray()
    while len(data) < limit and (chunk := await stream.read(limit - len(data))):
        data += chunk
    return bytes(data)


def _size(n: int) -> str:
    return f"{n / MIB:g} MiB" if n >= MIB else f"{n} bytes"


class HttpAgent:
    """``--agent-url URL``: POST the task and the credentials, read the result JSON."""

    def __init__(self, url: str, *, time_limit_s: float = 300.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise UserError(f"--agent-url {url!r}: expected an http:// or https:// URL")
        self.url = url
        self.label = url
        self.time_limit_s = time_limit_s
        self._session: aiohttp.ClientSession | None = None

    async def run(self, task: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(total=self.time_limit_s),
            )
        try:
            async with self._session.post(
                self.url,
                data=orjson.dumps(ctx.request(task)),
                headers={"Content-Type": "application/json"},
            ) as response:
                raw = await _read_upto(response.content, RESULT_CAP + 1)  # a result, no flood
                status = response.status
        except TimeoutError:
            raise AgentFailed(
                f"agent service ran past its time limit of {self.time_limit_s:g}s"
            ) from None
        except aiohttp.ClientError as exc:
            raise InfraError(f"agent service {self.url} unreachable: {exc}") from None
        if status >= 500 and status != 500:
            raise InfraError(f"agent service {self.url} answered HTTP {status}")
        if status != 200:
            raise AgentFailed(
                f"agent service answered HTTP {status}: {raw[:300].decode(errors='replace')}"
            )
        if len(raw) > RESULT_CAP:
            raise AgentFailed(
                f"agent service's answer is longer than the result cap of {_size(RESULT_CAP)}"
            )
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise AgentFailed("agent service answered with invalid JSON") from None
        return _result(value, "agent service")

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


__all__ = [
    "PASSED_ENV",
    "AgentFailed",
    "AgentRunner",
    "CallableAgent",
    "CommandAgent",
    "CommandProcesses",
    "HttpAgent",
    "child_env",
    "last_json_object",
]
