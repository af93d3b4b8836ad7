"""Blame of a command agent: replayed through workers, and from another folder than the run's.

The plain-openai example runs as a command (``--agent-cmd "python
examples/plain_openai/agent.py"``, a process per episode, under the sandbox;
2 tasks, its 3 modules varied) from the repository root. Blame is then run
from another folder, with ``--agent-worker`` naming the example's worker form
by the same relative path: it replays from the folder the run was made in
(recorded in the manifest), through the workers, and finds the decisive call
of every failure, a call the simulator rolled wrong. A worker command that is
not the agent is refused (so the replays do go through the worker given), and
a run whose manifest does not record its folder is refused in one line that
says to blame it from there. Before this change, blame from another folder
stopped with "not replayable: planner made 0 of its 1 recorded calls".
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from agentbus.app.blame_cmd import main as blame_main
from agentbus.app.run import main as run_main

REPO = Path(__file__).resolve().parents[2]
WORKER = f"{sys.executable} examples/plain_openai/worker.py"


@pytest.mark.slow
def test_a_command_agent_is_blamed_through_workers_from_another_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    run_dir = tmp_path / "run"
    argv = ["--agent-cmd", f"{sys.executable} examples/plain_openai/agent.py"]
    argv += ["--dataset", "examples/plain_openai/tasks.jsonl", "--limit", "2"]
    argv += ["--slots", "planner,solver,critic", "--run-dir", str(run_dir), "--sim-speed", "0"]
    argv += ["--no-plots", "--progress", "off", "--no-preflight", "--keep-going"]
    assert run_main(argv) == 0
    manifest = orjson.loads((run_dir / "manifest.json").read_bytes())
    assert manifest["cwd"] == str(REPO)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    # a worker that is not the agent: every episode differs, refused before any replay
    broken = f"{sys.executable} -c 'import sys; sys.exit(3)'"
    assert blame_main([str(run_dir), "--agent-worker", broken]) == 2
    assert not (run_dir / "blame.jsonl").exists()
    capsys.readouterr()

    monkeypatch.chdir(elsewhere)
    assert blame_main([str(run_dir), "--agent-worker", WORKER]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert f"replaying from {REPO}" in out
    doc = orjson.loads((run_dir / "blame.json").read_bytes())
    summary = doc["settings"][doc["latest"]]
    assert summary["episodes"] >= 1 and summary["replayable"] == summary["episodes"]
    assert summary["decisive"] >= 1 and summary["truth"]["accuracy"] == 1.0

    # a run whose manifest does not record its folder: refused in one line, from elsewhere
    monkeypatch.chdir(elsewhere)
    del manifest["cwd"]
    (run_dir / "manifest.json").write_bytes(orjson.dumps(manifest))
    (run_dir / "blame.jsonl").unlink()
    assert blame_main([str(run_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "relative to the folder the run was made in" in err[0], err
