"""Full 16-coalition evaluations of the os and atp environments (real sandbox, real coqc)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from environments.atp.prover import available
from environments.sandbox import unavailable
from tests.helpers.env_harness import full_coalition_sweep

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "capabench"
ready = unavailable() is None and available("coq") is None
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not ready, reason=str(unavailable() or available("coq"))),
]


@pytest.mark.parametrize("env", ["os", "atp"])
async def test_full_coalition_sweep(env: str, tmp_path: Path) -> None:
    await full_coalition_sweep(env, tmp_path)


@pytest.mark.skipif(not SHARED.is_dir(), reason="no shared CapaBench data")
@pytest.mark.parametrize(
    ("env", "dataset", "extra"),
    [("os", "os/task1.json", []), ("atp", "atp/coq.json", ["--limit", "1"])],
)
def test_cli_runs_a_shared_dataset(
    env: str, dataset: str, extra: list[str], tmp_path: Path
) -> None:
    proc = subprocess.run(
        [
            sys.executable, "-m", "agentbus.app.run", "--env", env, "--dataset",
            str(SHARED / dataset), *extra, "--sim-speed", "0", "--progress", "off",
            "--run-dir", str(tmp_path / "run"),
        ],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Shapley value per slot" in proc.stdout
