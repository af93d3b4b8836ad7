"""Command-line output into a closed pipe: stop quietly, as Unix tools do.

``python -m agentbus.truth show | head`` closes the pipe after ten lines;
Python then raises BrokenPipeError on the next write, and again when it
flushes stdout at exit, which printed two tracebacks for a perfectly normal
use. :func:`pipe_safe` wraps a command's ``main``: on a closed pipe it points
stdout at /dev/null (so the flush at exit cannot fail again) and returns
141, the status a shell reports for a process ended by SIGPIPE.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import ParamSpec

P = ParamSpec("P")

#: 128 + SIGPIPE, what ``head``'s upstream normally exits with
EXIT_BROKEN_PIPE = 141


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout already closed or not a real file
        pass


def pipe_safe(main: Callable[P, int]) -> Callable[P, int]:
    """``main``, returning 141 instead of raising when stdout's reader went away."""

    @functools.wraps(main)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            status = main(*args, **kwargs)
            sys.stdout.flush()  # a write still buffered fails here, inside the guard
        except BrokenPipeError:
            _silence_stdout()
            return EXIT_BROKEN_PIPE
        return status

    return wrapper


__all__ = ["EXIT_BROKEN_PIPE", "pipe_safe"]
