"""One script in a fresh, throw-away sandbox (a compile, a check).

Input arrives on stdin, so nothing is written on the host; the sandbox and
its tmpfs vanish when the script ends or its timeout kills it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from environments.sandbox import signals
from environments.sandbox.bwrap import bwrap_argv
from environments.sandbox.limits import SandboxLimits
from environments.sandbox.result import KILLED, CommandResult


async def start_script(
    script: str, limits: SandboxLimits, extra_ro: Sequence[tuple[str, str]], *, stderr: int
) -> asyncio.subprocess.Process:
    """``script`` under bash in a new sandbox, in its own session, stdin and stdout piped.

    ``stderr`` is where the script's standard error goes (``asyncio.subprocess``'s
    ``STDOUT`` or ``DEVNULL``).
    """
    inner = f"{limits.ulimit_line()}\n{script}"
    argv = bwrap_argv(["bash", "--noprofile", "--norc", "-c", inner], limits, extra_ro=extra_ro)
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
    )


async def stop(proc: asyncio.subprocess.Process) -> None:
    """Kill ``proc``'s process group and wait (10 s at most) for it to be reaped."""
    signals.kill(proc)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), 10)


async def run_once(
    script: str,
    stdin: str = "",
    limits: SandboxLimits | None = None,
    extra_ro: Sequence[tuple[str, str]] = (),
) -> CommandResult:
    """Run ``script`` with bash in a new sandbox, ``stdin`` on its standard input.

    ``extra_ro`` binds more host paths read-only (source, destination), such
    as a prover's configuration file.
    """
    limits = limits or SandboxLimits()
    proc = await start_script(script, limits, extra_ro, stderr=asyncio.subprocess.STDOUT)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(stdin.encode()), limits.timeout_s)
    except TimeoutError:
        await stop(proc)
        return CommandResult(KILLED, "", timed_out=True)
    finally:
        if proc.returncode is None:
            await stop(proc)
    text = out.decode(errors="replace")
    cut = len(text) > limits.output_bytes
    return CommandResult(proc.returncode or 0, text[: limits.output_bytes], truncated=cut)
