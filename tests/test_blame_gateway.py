"""Blame for your own agent through the gateway: a step is one gateway call.

The plain-openai example (3 tasks, its 3 modules varied: 24 episodes) is blamed end
to end: its failures reproduce call for call from the run's cache and every
decisive call is one the simulator's generic gateway model rolled wrong. An
agent that does not ask the same thing on identical answers (a random nonce
in its prompt) is refused in one line with exit status 2, before any replay.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentbus.app.blame_cmd import main as blame_main
from agentbus.app.run import main as run_main
from examples.plain_openai import agent as plain


def _run(run_dir: Path, agent: str) -> None:
    argv = ["--agent", agent, "--dataset", "examples/plain_openai/tasks.jsonl", "--limit", "3"]
    argv += ["--slots", "planner,solver,critic", "--run-dir", str(run_dir), "--sim-speed", "0"]
    # --keep-going: the flaky agent's answers fit no task, which would stop the run (issue 50)
    argv += ["--no-plots", "--progress", "off", "--no-preflight", "--keep-going"]
    assert run_main(argv) == 0


async def flaky(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The example agent with a nonce in its task text: not deterministic.

    It always answers wrong, so every episode is a failure to blame (with the
    nonce its outcomes would be random, and a run without a failure would
    leave nothing to check).
    """
    task = {**task, "question": f"{task['question']} (nonce {random.random()})"}
    await plain.solve(ctx.openai, task, set(ctx.off_slots))
    return {"answer": "not an answer"}


def test_gateway_failures_are_blamed_on_rolled_mistakes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    _run(tmp_path / "plain", "examples.plain_openai.agent:run")
    assert blame_main([str(tmp_path / "plain")]) == 0
    summary = orjson.loads((tmp_path / "plain" / "blame.json").read_bytes())
    assert summary["episodes"] >= 1 and summary["replayable"] == summary["episodes"]
    assert summary["decisive"] >= 1 and summary["truth"]["accuracy"] == 1.0

    _run(tmp_path / "flaky", "test_blame_gateway:flaky")
    capsys.readouterr()
    assert blame_main([str(tmp_path / "flaky")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not deterministic" in err[0] and "another prompt" in err[0]
    assert not (tmp_path / "flaky" / "blame.jsonl").exists()  # nothing was replayed
