"""A persistent sandbox: one bubblewrap namespace per episode, many commands.

The sandbox starts its init (:mod:`environments.sandbox.init`) as an asyncio
subprocess and talks to it over pipes, so no command ever blocks the event
loop and hundreds of sandboxes share one loop. Each command has two
timeouts: the init kills the command's process group at its own; a
host-side deadline a few seconds later kills the whole sandbox if the init
stops answering (then every later command fails fast with a clear message).
``close`` kills the bubblewrap process; with ``--die-with-parent`` and a
PID namespace that takes every process inside with it, and the private
mounts vanish with the namespace.

The host trusts an answer only when it is framed exactly as asked: the
header carries this request's random nonce, exactly the announced bytes
follow, then the trailer with the nonce again. Anything else (a line before
the header, a wrong nonce, a count over the limit, a missing trailer) means
the sandbox is broken: the command's result says so (``broken``) and every
later command fails, so a forged answer is never read as the next one.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import secrets
import signal
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from agentbus import waiting_for_slot
from environments.sandbox import budget, cgroup, freezer, signals
from environments.sandbox.bwrap import bwrap_argv
from environments.sandbox.limits import SandboxLimits
from environments.sandbox.result import KILLED, CommandResult
from environments.sandbox.supervisor import MARK, supervisor_argv

#: seconds the host waits beyond a command's own timeout before it gives up on the sandbox
GRACE_S = 5.0
#: seconds a sandbox may take to start
START_TIMEOUT_S = 20.0


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (empty when the kernel does not list them)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


_HEAD = re.compile(
    rb"@@AB@@ ([0-9a-f]{32}) (\d{1,3}) (\d{1,12}) (\d{1,15}) ([tkx-]{1,3}) (\d{1,12})\n\Z"
)
#: bytes the init may add to a command's output (the fork-bomb note)
_NOTE_BYTES = 200


class SandboxError(RuntimeError):
    """The sandbox could not start or stopped answering (not a command's failure)."""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode() or "="


class Sandbox:
    """One isolated shell session. Use ``async with Sandbox() as box: await box.run(...)``."""

    def __init__(self, limits: SandboxLimits | None = None, hostname: str = "sandbox") -> None:
        self.limits = limits or SandboxLimits()
        self.hostname = hostname
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._broken: str | None = None
        self._gate: budget.MemoryGate | None = None
        #: this sandbox's memory cgroup (None where the machine has none for us)
        self.cgroup: Path | None = None
        #: the agent's process container, frozen before checks (None: signals instead)
        self.container: freezer.Container | None = None
        self._frozen = False

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Wait for room in the run's memory budget, start the namespace, wait for its init."""
        if self._proc is not None:
            return
        mb = self.limits.memory_budget_mb
        self._gate = budget.gate()
        # waiting for the run's budget is the run's traffic, not the episode's own time:
        # it moves the episode's deadline out, as a wait for a model slot does
        with waiting_for_slot():
            await self._gate.acquire(mb)
        self.cgroup = cgroup.make(mb)
        self.container = freezer.make(self.cgroup)
        fds: list[int] = []
        if self.container is not None:
            try:
                fds = self.container.open_fds()
            except OSError:
                await self.container.remove()
                self.container = None
        # imported here, not with the module: ``python -m environments.sandbox.image`` runs it
        from environments.sandbox.image import image_binds

        argv = bwrap_argv(
            supervisor_argv(self.limits, fds),
            self.limits,
            hostname=self.hostname,
            caps=True,
            extra_ro=image_binds(),
        )
        also = self.container.group if self.container and self.container.owned else None
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *cgroup.enter_argv(self.cgroup, argv, also),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                pass_fds=fds,
            )
        except OSError as exc:
            await self._release()
            raise SandboxError(f"sandbox did not start: {exc}") from None
        finally:
            for fd in fds:  # the init holds its own copies
                os.close(fd)
        try:
            await asyncio.wait_for(self._ready(), START_TIMEOUT_S)
        except (TimeoutError, SandboxError) as exc:
            await self.close()
            raise SandboxError(f"sandbox did not start: {exc}") from None

    async def _release(self) -> None:
        gate, self._gate = self._gate, None
        if gate is not None:
            await gate.release(self.limits.memory_budget_mb)
        box, self.container = self.container, None
        if box is not None:
            await box.remove()
        group, self.cgroup = self.cgroup, None
        await cgroup.remove(group)

    async def _ready(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        said: list[str] = []
        while True:
            line = await self._proc.stdout.readline()
            if not line:
                raise SandboxError(" ".join(said).strip() or "bubblewrap exited")
            text = line.decode(errors="replace").strip()
            if text == f"{MARK} ready":
                return
            if text == f"{MARK} ready signals":  # the init could not use the container
                box, self.container = self.container, None
                if box is not None:
                    await box.remove()
                return
            said.append(text)

    async def run(
        self,
        command: str,
        args: Sequence[str] = (),
        timeout_s: float | None = None,
        independent: bool = False,
        check: bool = False,
    ) -> CommandResult:
        """Run ``command`` (bash) with positional ``args``; never raises for the command's sake.

        Commands share the working directory and exported variables of the
        session; an ``independent`` one (an init script) starts in ``/root``
        and leaves the session as it was. A ``check`` runs from the trusted
        side: every process the agent left is stopped first, and the script
        gets a fixed environment and system ``PATH`` (see ``init.py``).
        """
        if self._proc is None:
            await self.start()
        timeout = timeout_s if timeout_s is not None else self.limits.timeout_s
        async with self._lock:
            if self._broken is not None:
                return CommandResult(KILLED, f"[sandbox unavailable: {self._broken}]", broken=True)
            mode = "c" if check else "i" if independent else "s"
            nonce = secrets.token_hex(16)
            words = [nonce, f"{timeout:g}", mode, _b64(command), *(_b64(a) for a in args)]
            try:
                killed = await self._contain(check)
                result = await asyncio.wait_for(
                    self._exchange(" ".join(words), nonce), timeout + GRACE_S
                )
                return replace(result, stopped_killed=True) if killed else result
            except (TimeoutError, SandboxError, ConnectionError, ValueError) as exc:
                why = str(exc) or "the sandbox stopped answering"
                self._broken = why
                await self._kill()
                return CommandResult(
                    KILLED, f"[sandbox unavailable: {why}]", timed_out=True, broken=True
                )

    async def _contain(self, check: bool) -> bool:
        """Freeze the agent's container before a check (thaw it for the agent's next turn);
        True when it would not freeze and was killed instead."""
        box = self.container
        if box is None or check == self._frozen:
            return False
        if not check:
            box.thaw()
            self._frozen = False
            return False
        self._frozen = True
        try:
            await box.settle()
            return not await box.freeze()
        except OSError as exc:  # no check runs beside processes we could not stop
            raise SandboxError(f"the agent's processes could not be frozen: {exc}") from None

    async def _exchange(self, request: str, nonce: str) -> CommandResult:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(request.encode() + b"\n")
        await proc.stdin.drain()
        line = await proc.stdout.readline()
        if not line:
            raise SandboxError("the sandbox's init exited")
        head = _HEAD.match(line)
        if head is None or head.group(1).decode() != nonce:
            raise SandboxError(f"broken protocol: unexpected answer {line[:60]!r}")
        rc, shown, total = int(head.group(2)), int(head.group(3)), int(head.group(4))
        split = int(head.group(6))
        if shown > self.limits.output_bytes + _NOTE_BYTES or shown > total or split > shown:
            raise SandboxError(f"broken protocol: {shown} of {total} bytes announced")
        body = await proc.stdout.readexactly(shown) if shown else b""
        trailer = await proc.stdout.readline()
        if trailer != f"{MARK} end {nonce}\n".encode():
            raise SandboxError(f"broken protocol: bad trailer {trailer[:60]!r}")
        flags = head.group(5).decode()
        if "x" in flags:
            raise SandboxError("the sandbox's init was tampered with (its resource limits changed)")
        return CommandResult(
            exit_code=rc,
            output=body[:split].decode(errors="replace"),
            stderr=body[split:].decode(errors="replace"),
            truncated=total > shown,
            timed_out="t" in flags,
            stopped_killed="k" in flags,
        )

    async def _kill(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.returncode is None:
            # the namespace's init first: its death takes every process inside with it
            # (bwrap's --die-with-parent would too, but only once bwrap has set it up)
            for child in _children(proc.pid):
                with contextlib.suppress(OSError):
                    os.kill(child, signal.SIGKILL)
            signals.kill(proc)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 10)

    async def close(self) -> None:
        """Kill the sandbox and everything in it, give back its budget (idempotent)."""
        proc = self._proc
        if proc is None:
            await self._release()
            return
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        await self._kill()
        self._proc = None
        self._broken = self._broken or "closed"
        await self._release()
