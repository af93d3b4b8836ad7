"""Blame for your own agent through the gateway: a step is one gateway call.

The plain-openai example blamed end to end (its failures reproduce call for call
and every decisive call is one the simulator's generic gateway model rolled
wrong) is in ``test_blame_command.py``, as a command agent. Here: an agent that
does not ask the same thing on identical answers (a random nonce in its prompt)
is refused in one line with exit status 2, before any replay,
and so is one whose prompts reproduce but whose returned result holds an
unseeded random number (every episode differing is listed first).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from agentbus.app.blame_cmd import main as blame_main
from agentbus.app.run import main as run_main
from examples.plain_openai import agent as plain


def _run(run_dir: Path, agent: str, slots: str = "planner,solver,critic") -> None:
    """A 3-task run; the refusal runs vary one slot (only all-default episodes are blamed)."""
    argv = ["--agent", agent, "--dataset", "examples/plain_openai/tasks.jsonl", "--limit", "3"]
    argv += ["--slots", slots, "--run-dir", str(run_dir), "--sim-speed", "0"]
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


async def coin(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The example agent whose result carries an unseeded random number: its prompts
    reproduce on identical answers, its final answer does not."""
    found = await plain.solve(ctx.openai, task, set(ctx.off_slots))
    return {**found, "confidence": random.random()}


def test_gateway_failures_are_blamed_on_rolled_mistakes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    # the example blamed end to end (failures reproduced, decided on rolled mistakes) is
    # tests/replay/test_blame_command.py, as a command agent through its worker
    _run(tmp_path / "flaky", "tests.replay.test_blame_gateway:flaky", "planner")
    capsys.readouterr()
    assert blame_main([str(tmp_path / "flaky")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not deterministic" in err[0] and "another prompt" in err[0]
    assert not (tmp_path / "flaky" / "blame.jsonl").exists()  # nothing was replayed

    # randomness in the final answer only: the prompts reproduce, the answer does not
    _run(tmp_path / "coin", "tests.replay.test_blame_gateway:coin")
    capsys.readouterr()
    assert blame_main([str(tmp_path / "coin")]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "not deterministic" in err[0] and "the agent returned" in err[0]
    assert "Traceback" not in captured.out + captured.err
    # no traceback logged either (the gateway's handler met the replay's stop on purpose)
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    listed = [x for x in captured.out.splitlines() if x.startswith("not replayable: ")]
    assert len(listed) >= 1 and all("the agent returned" in x for x in listed)
