"""benchmarks/real_model.py cleans up after itself (issue 39 item 6).

A server that cannot start (here: an interpreter without llama-cpp-python,
taken for one that has it) must leave nothing in the temporary directory;
the old script left its server log there (and named it in the error).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_a_failed_server_start_leaves_no_files_and_shows_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import real_model
    finally:
        sys.path.pop(0)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(real_model, "has_server", lambda python: True)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(SystemExit) as stopped:
        real_model.main(["--python", sys.executable, "--gguf", str(gguf)])
    assert "No module named" in str(stopped.value)  # the log's tail, not a path to it
    assert list(scratch.iterdir()) == []
