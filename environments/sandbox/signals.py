"""Kill an asyncio subprocess without stealing its exit status from asyncio.

``asyncio.subprocess.Process.kill`` ends in ``subprocess.Popen.send_signal``,
which first calls ``poll()``: if the child has just exited (bubblewrap does,
the moment the namespace's init is killed), that ``waitpid`` reaps it behind
asyncio's child watcher. The watcher's own ``waitpid`` then fails, it logs
"Unknown child process pid N, will report returncode 255" and the process's
``returncode`` reads 255. Signalling the pid directly does not reap. Until
the watcher reaps the child its pid cannot be reused; between that reap and
asyncio setting ``returncode`` (a callback on this loop) a signal by pid could
in principle reach a new process with the same pid, the same window
``Popen.send_signal`` itself leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal


def kill(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL ``proc`` unless asyncio already knows it exited; never reaps it."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)
