"""Run one of our commands as a user does: ``python -m MODULE ARGS`` in a child process.

The command-line tests check what a user sees (the exit status, the one error
line, what is printed), so they start the module in a fresh interpreter rather
than calling ``main()``; each used to carry its own copy of the call.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_m(
    module: str,
    *args: str,
    timeout: float = 120,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m module *args`` with its output captured as text; a failing exit is returned,
    not raised, because the exit status is what the tests check. ``env`` None inherits ours."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=None if env is None else dict(env),
        check=False,
    )


def env_with_repo(without: Iterable[str] = ()) -> dict[str, str]:
    """Our environment with this checkout first on PYTHONPATH (for a child run in another
    folder) and the variables in ``without`` removed."""
    dropped = set(without)
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONPATH"] = str(ROOT)
    return env
