"""Where a user's agent's own output goes: the run's ``agent.log``, not the console.

Frameworks talk: CrewAI warned 121 times in 64 episodes, LiteLLM and DSPy
attach their own console handlers, SDKs warn about deprecations. On the
console that buries agentbus's own lines; thrown away it hides what a user
needs when the agent misbehaves. So it goes to one file in the run
directory, named on the console once, the first time something lands there:

* a command agent's stderr and a worker's stdout log lines (every line that
  is not its result), each line headed by the process and its task
  (:class:`Sink`, fed by the runners beside the tails their failure
  reasons keep);
* an in-process agent's Python logging (the root logger's handler, and each
  framework logger's own console handler swapped for it while the run
  lasts), its warnings, and what it prints to stdout or stderr from the
  agent's own task or from a thread agentbus did not start
  (:func:`capture`; a thread of agentbus's own pool run without the
  episode's context prints where it always did).

Lines are scrubbed of secrets like every file agentbus writes, and the file
stops at :data:`LOG_CAP` bytes with a line saying so. A failure's reason
keeps what it needs on its own (:func:`failure_text`): the whole last
traceback, however much noise came before it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from agentbus.core.logs import scrub

#: the file's name in the run directory
AGENT_LOG = "agent.log"
#: bytes agent.log may take; past them the rest is dropped (one line says so)
LOG_CAP = 256 * 1024 * 1024
#: how much of a failed command's stderr a reason keeps without a traceback
STDERR_TAIL = 2000
#: the most of a command's stderr kept for its failure: its last traceback, whole up to here
TRACEBACK_CAP = 16 * 1024
#: the start of a Python traceback
TRACEBACK = "Traceback (most recent call last):"
#: loggers that are agentbus's own, never the agent's
OWN_LOGGERS = ("agentbus", "attribution", "modules", "environments")
#: name prefixes of agentbus's own threads (what they print stays on the console)
OWN_THREADS = ("agentbus", "AnyIO worker thread")
#: the task the running in-process agent serves (None outside an agent's own code)
AGENT_TASK: ContextVar[str | None] = ContextVar("agentbus_agent_task", default=None)
#: set while agentbus itself writes to the console from the agent's context (the notice)
_OWN: ContextVar[bool] = ContextVar("agentbus_own_line", default=False)


def failure_text(stderr: str) -> str:
    """What a failure's reason keeps of a command's stderr: its last Python traceback
    whole (whatever noise came before it), else the last :data:`STDERR_TAIL` characters."""
    start = stderr.rfind(TRACEBACK)
    return (stderr[start:] if start != -1 else stderr[-STDERR_TAIL:]).strip()


class AgentLog:
    """The run's agent.log, opened when the first line comes (none for a quiet agent).

    ``path`` None keeps nothing (a probe, a test). ``notice`` gets the console
    line that names the file, once. Writes come from the event loop and from
    an in-process agent's threads, so they are locked.
    """

    def __init__(
        self, path: Path | None, notice: Callable[[str], None] | None = None, cap: int = LOG_CAP
    ) -> None:
        self.path = path
        self.notice = notice
        self.cap = cap
        self.written = 0
        self._file: Any = None
        self._lock = threading.Lock()

    def write(self, source: str, text: str) -> None:
        """Lines of ``text``, each headed by ``[source]``."""
        if self.path is None or self.written > self.cap or not text.strip():
            return
        lines = "".join(f"[{source}] {line}\n" for line in text.rstrip("\n").split("\n"))
        data = scrub(lines).encode(errors="replace")
        first = False
        with self._lock:
            if self._file is None:
                self._file = self.path.open("ab", buffering=0)
                first = True
            if self.written + len(data) > self.cap:
                data = f"[agentbus] agent.log reached {self.cap} bytes; the rest dropped\n".encode()
                self.written = self.cap
            self.written += len(data)
            self._file.write(data)
        if first and self.notice is not None:  # outside the lock, as agentbus's own line
            token = _OWN.set(True)
            try:
                self.notice(
                    f"the agent's own output (its frameworks' logs and warnings, its stderr) "
                    f"goes to {self.path}, not the console"
                )
            finally:
                _OWN.reset(token)

    def sink(self, source: str) -> Sink:
        return Sink(self, source)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


class Tail:
    """The last ``keep`` bytes of a stream, and how many came in all; each chunk also goes
    to ``sink`` (agent.log) when one is given."""

    def __init__(self, keep: int, name: str, sink: Sink | None = None) -> None:
        self.keep = keep
        self.name = name
        self.sink = sink
        self.buffer = bytearray()
        self.total = 0
        self.dropped = False

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.buffer += chunk
        if len(self.buffer) > self.keep:
            del self.buffer[: len(self.buffer) - self.keep]
            self.dropped = True
        if self.sink is not None:
            self.sink.add(chunk)

    def flush(self) -> None:
        if self.sink is not None:
            self.sink.flush()

    def text(self) -> str:
        return self.buffer.decode(errors="replace")


class Sink:
    """One process's stream into agent.log: chunks in, whole lines out, headed by its source."""

    def __init__(self, log: AgentLog, source: str) -> None:
        self.log = log
        self.source = source
        self._partial = b""

    def add(self, chunk: bytes) -> None:
        data = self._partial + chunk
        end = data.rfind(b"\n")
        if end == -1:
            self._partial = data[-65536:]  # a line without end is kept only so far
            return
        self._partial = data[end + 1 :]
        self.log.write(self.source, data[:end].decode(errors="replace"))

    def flush(self) -> None:
        if self._partial:
            self.log.write(self.source, self._partial.decode(errors="replace"))
            self._partial = b""


def agent_thread() -> str | None:
    """The name of the current thread when the agent or its framework started it (a pool of
    its own, run without the episode's context), else None: agentbus's loop, its pools
    (``agentbus-*``), anyio's workers and rich's display are agentbus's own."""
    thread = threading.current_thread()
    if (
        thread is threading.main_thread()
        or thread.name.startswith(OWN_THREADS)
        or type(thread).__name__ == "_RefreshThread"
    ):
        return None
    return thread.name


class _Diverted:
    """sys.stdout or sys.stderr while in-process agents run: the agent's writes to agent.log."""

    def __init__(self, real: Any, log: AgentLog, name: str) -> None:
        self._real = real
        self._log = log
        self._name = name
        self._partial: dict[str, str] = {}  # per task: a line print() has not ended yet
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        task = None if _OWN.get() else AGENT_TASK.get() or agent_thread()
        if task is None:
            return int(self._real.write(text))
        with self._lock:
            text = self._partial.pop(task, "") + text
            end = text.rfind("\n")
            if end == -1:
                self._partial[task] = text[-65536:]
                return len(text)
            if end + 1 < len(text):
                self._partial[task] = text[end + 1 :]
        self._log.write(f"{task} {self._name}", text[:end])
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _ToLog(logging.Handler):
    """A logging handler writing the agent's (not agentbus's) records to agent.log."""

    def __init__(self, log: AgentLog) -> None:
        super().__init__()
        self.log = log
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.split(".")[0] in OWN_LOGGERS:
            return
        with contextlib.suppress(Exception):
            self.log.write(AGENT_TASK.get() or agent_thread() or "log", self.format(record))


class Capture:
    """The in-process redirection (see :func:`capture`); :meth:`adopt` takes new loggers."""

    def __init__(self, log: AgentLog) -> None:
        self.handler = _ToLog(log)
        self.consoles = {id(s) for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)}
        self.swapped: list[tuple[logging.Logger, logging.Handler]] = []
        self.joined: list[logging.Logger] = []

    def adopt(self) -> None:
        """Swap each framework logger's console handler for agent.log (cheap: run per episode)."""
        for name, logger in list(logging.Logger.manager.loggerDict.items()):
            if not isinstance(logger, logging.Logger) or name.split(".")[0] in OWN_LOGGERS:
                continue
            for handler in list(logger.handlers):
                stream = getattr(handler, "stream", None)
                if isinstance(handler, logging.StreamHandler) and (
                    id(stream) in self.consoles or isinstance(stream, _Diverted)
                ):
                    logger.removeHandler(handler)
                    self.swapped.append((logger, handler))
                    if not logger.propagate and logger not in self.joined:
                        logger.addHandler(self.handler)
                        self.joined.append(logger)

    def undo(self) -> None:
        for logger, handler in self.swapped:
            logger.addHandler(handler)
        for logger in self.joined:
            logger.removeHandler(self.handler)


@contextlib.contextmanager
def capture(log: AgentLog) -> Iterator[Capture]:
    """While in-process agents run: their logs, warnings and prints go to agent.log."""
    root = logging.getLogger()
    taken = Capture(log)
    streams = sys.stdout, sys.stderr
    root.addHandler(taken.handler)
    logging.captureWarnings(True)
    sys.stdout = _Diverted(streams[0], log, "stdout")
    sys.stderr = _Diverted(streams[1], log, "stderr")
    taken.adopt()
    try:
        yield taken
    finally:
        sys.stdout, sys.stderr = streams
        logging.captureWarnings(False)
        root.removeHandler(taken.handler)
        taken.undo()


__all__ = [
    "AGENT_LOG",
    "AGENT_TASK",
    "STDERR_TAIL",
    "TRACEBACK_CAP",
    "AgentLog",
    "Capture",
    "Sink",
    "Tail",
    "capture",
    "failure_text",
]
