"""A command piped into ``head`` stops quietly: no traceback when the reader goes away."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "command",
    [
        ["agentbus.truth", "show", "--env", "math"],
        ["agentbus.truth", "list"],
    ],
)
def test_output_into_a_closed_pipe_is_no_traceback(command: list[str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", *command],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # a small pipe buffer is not needed: the reader closes before the writer starts
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `| head -n 0`: the reader is gone before anything is written
    err = proc.stderr.read().decode()
    status = proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert status == 141, (status, err)
