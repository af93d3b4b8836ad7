"""SIGTERM is handled like Ctrl-C: the run stops, keeps its episodes and says how to resume.

SIGTERM is what ``timeout``, ``docker stop``, systemd and job schedulers send;
before, it ended a run silently. Tested on a real ``python -m agentbus.run``
in a subprocess, and on :func:`until_interrupted` directly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio

from agentbus.core.interrupt import until_interrupted

#: a small math run, slow enough (simulated latency on) that SIGTERM lands mid-run
ARGS = (
    "--env math --tasks 8 --progress off --no-plots --no-preflight --concurrency 4 --sim-speed 10"
).split()


def test_sigterm_cancels_the_work_and_says_which_signal() -> None:
    async def main() -> tuple[bool, signal.Signals | None, float]:
        started = anyio.current_time()
        asyncio_call_later(0.2, lambda: os.kill(os.getpid(), signal.SIGTERM))
        outcome = await until_interrupted(lambda: anyio.sleep(30))
        return outcome.interrupted, outcome.signal, anyio.current_time() - started

    interrupted, sig, took = anyio.run(main)
    assert interrupted and sig == signal.SIGTERM
    assert took < 10


def test_sigterm_mid_run_exits_143_with_the_resume_hint(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentbus.run", *ARGS, "--run-dir", str(run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        log = run / "events.jsonl"
        deadline = time.monotonic() + 120
        while not (log.exists() and b'"type":"episode.ended"' in log.read_bytes()):
            assert proc.poll() is None, "the run ended before SIGTERM could reach it"
            assert time.monotonic() < deadline, "no episode ended within 120 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, err[-2000:])
    assert "stopped by SIGTERM" in out and f"Resume with --resume {run}" in out
    assert "Traceback" not in err
    # the finished episodes are on disk for the resume
    assert log.read_bytes().count(b'"type":"episode.ended"') >= 1


def asyncio_call_later(delay: float, fn: object) -> None:
    import asyncio

    asyncio.get_running_loop().call_later(delay, fn)  # type: ignore[arg-type]
