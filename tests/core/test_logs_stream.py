"""Logging follows ``sys.stderr`` when a program swaps it (it once wrote to a closed stream)."""

from __future__ import annotations

import io
import sys

import pytest
import structlog

from agentbus.core.logs import configure


def test_a_warning_after_stderr_was_swapped_and_closed_goes_to_the_current_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = sys.stderr
    swapped = io.StringIO()
    sys.stderr = swapped
    try:
        configure("warning", json=True)
    finally:
        sys.stderr = before
    swapped.close()  # what pytest does to a capture stream after its test
    structlog.get_logger("t").warning("store.repaired_tail", dropped_bytes=3)
    err = capsys.readouterr().err
    assert '"event": "store.repaired_tail"' in err and '"dropped_bytes": 3' in err
    configure("warning")
