"""Run one of our commands as a user does (``python -m MODULE ARGS``, a benchmark script) in a
child process, and read the episodes its run directory's log says ended.

The command-line tests check what a user sees (the exit status, the one error
line, what is printed), so they start the command in a fresh interpreter rather
than calling ``main()``; each used to carry its own copy of the call.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[2]


def command(
    argv: Sequence[str],
    *,
    timeout: float = 120,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``argv`` with its output captured as text; a failing exit is returned, not raised,
    because the exit status is what the tests check. ``env`` None inherits ours."""
    return subprocess.run(
        list(argv),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=None if env is None else dict(env),
        check=False,
    )


def python(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    """This interpreter with ``args`` (a script and its flags); options as for :func:`command`."""
    return command([sys.executable, *args], **options)


def python_m(module: str, *args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    """``python -m module *args``; options as for :func:`command`."""
    return python("-m", module, *args, **options)


def succeeded(proc: subprocess.CompletedProcess[str]) -> str:
    """The command's stdout, once it has exited 0 (else the tails of what it printed)."""
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    return proc.stdout


def env_with_repo(without: Iterable[str] = ()) -> dict[str, str]:
    """Our environment with this checkout first on PYTHONPATH (for a child run in another
    folder) and the variables in ``without`` removed."""
    dropped = set(without)
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONPATH"] = str(ROOT)
    return env


def venv_env(**extra: str) -> dict[str, str]:
    """Our environment with this interpreter's folder first on PATH (so ``python`` in an
    ``--agent-cmd`` is the test's own) and ``extra`` set."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def ended_episodes(run_dir: Path) -> list[dict[str, Any]]:
    """The ``episode.ended`` events of a run directory's log, in log order."""
    lines = (run_dir / "events.jsonl").read_bytes().splitlines()
    return [e for e in map(orjson.loads, lines) if e.get("type") == "episode.ended"]
