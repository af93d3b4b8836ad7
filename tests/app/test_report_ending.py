"""``python -m agentbus.report`` on stopped and cut-off runs of a user's agent (issue 50 item 5).

Before, a run stopped as misconfigured left a log that ``agentbus.report``
turned into a results.md with no word of the stop and no agent-failure
section (the run writes that section; the rebuild did not). Now the rebuilt
results.md and the console lead with how the run ended, and the failure
section is there; a log cut before ``run.finished`` reads as partial. And an
in-process agent's crash keeps its whole traceback in the record.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentbus.app.report import main
from agentbus.core.errors import UserError
from tests.helpers.agent_probes import probe_run


def _ended(run_dir: Path) -> list[dict]:
    lines = (run_dir / "events.jsonl").read_bytes().splitlines()
    return [e for e in map(orjson.loads, lines) if e.get("type") == "episode.ended"]


def test_a_stopped_run_rebuilds_with_its_reason_and_its_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UserError, match="misconfigured"):
        probe_run(tmp_path, ["crash-1", "crash-2", "crash-3", "ok-1"])
    run_dir = tmp_path / "run"
    assert main([str(run_dir), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("stopped early: misconfigured:"), out[:300]
    assert "agent failures (counted as the agent's zeros in v(S))" in out
    md = (run_dir / "results.md").read_text()
    assert md.startswith("**stopped early: misconfigured:")
    assert "## Agent failures" in md and "the probe crashed on purpose" in md
    results = orjson.loads((run_dir / "results.json").read_bytes())
    assert results["agent_failures"]["by_kind"]["agent_crash"] >= 4
    # an in-process agent's crash keeps its traceback (before: the exception's line only)
    crashed = [e for e in _ended(run_dir) if e["outcome"].get("error_kind") == "agent_crash"]
    error = crashed[0]["outcome"]["details"]["agent_error"]
    assert error.startswith("agent raised RuntimeError: the probe crashed on purpose\n")
    assert "Traceback (most recent call last)" in error and "agent_probes.py" in error

    log = run_dir / "events.jsonl"
    lines = [ln for ln in log.read_bytes().splitlines() if b'"run.finished"' not in ln]
    log.write_bytes(b"\n".join(lines) + b"\n")
    assert main([str(run_dir), "--no-plots", "--quiet"]) == 0
    md = (run_dir / "results.md").read_text()
    assert md.startswith("**partial: the run was interrupted before its end")
