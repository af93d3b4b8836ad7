"""Every way a run ends names its next step (issue 39 item 4).

* a run that gave cells up after every attempt failed exits 1 and prints the
  ``--resume`` command (it used to exit 0 with no hint);
* a run that stopped itself after repeated infrastructure failures prints it
  too (only the signal paths did);
* the self-stop lets the episodes in flight end: one running on a healthy
  default server is counted, not cancelled with the dead test server's.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from agentbus.app import evaluate as ev
from agentbus.app import run as cli
from agentbus.app.breaker import INFRA_BREAKER
from agentbus.core.outcome import Outcome
from agentbus.core.record import EpisodeRecord


def report(tmp: Path, *, given_up: int = 0, stopped: str | None = None) -> ev.RunReport:
    return ev.RunReport(
        run_dir=tmp / "run",
        results={"failures": {"unresolved_cells": given_up}},
        episodes_run=8,
        episodes_skipped=0,
        infra_errors=given_up,
        llm_summary="LLM calls: requested 1, sent 1",
        stopped_early=stopped,
        given_up=given_up,
    )


def run_cli(
    tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], done: Any
) -> tuple[int, str]:
    async def fake_evaluate(config: Any, **_: Any) -> ev.RunReport:
        return done

    monkeypatch.setattr(ev, "evaluate", fake_evaluate)
    status = cli.main(["--no-preflight", "--run-dir", str(tmp / "run"), "--progress", "off"])
    out = capsys.readouterr()
    return status, out.out + out.err


def test_given_up_cells_exit_1_with_the_resume_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text = run_cli(tmp_path, monkeypatch, capsys, report(tmp_path, given_up=4))
    assert status == 1
    assert "4 cells given up" in text
    assert f"python -m agentbus.run --resume {tmp_path / 'run'}" in text


def test_a_self_stop_names_the_resume_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    why = "stopped after 25 episodes in a row failed on the infrastructure; first error: x"
    status, text = run_cli(tmp_path, monkeypatch, capsys, report(tmp_path, stopped=why))
    assert status == 1 and why in text
    assert f"--resume {tmp_path / 'run'}" in text


def test_a_complete_run_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text = run_cli(tmp_path, monkeypatch, capsys, report(tmp_path))
    assert status == 0 and "--resume" not in text


def _record(n: int, ok: bool) -> EpisodeRecord:
    outcome = Outcome(reward=1.0, success=True) if ok else Outcome(error="down", error_kind="infra")
    return EpisodeRecord(
        counts=outcome.counts_for_value,
        episode_id=f"e{n}",
        task_id=f"t{n}",
        test_model="openai:dead",
        default_model="sim:weak",
        coalition=() if ok else ("action",),
        slots=("action",),
        outcome=outcome,
    )


async def test_the_self_stop_lets_a_healthy_servers_episode_finish() -> None:
    """25 episodes on the dead server fail while one on the healthy default runs on."""
    seen: list[EpisodeRecord] = []

    class Runtime:
        async def run(self, specs: Any, on_outcome: Any) -> None:
            async def healthy() -> None:
                await anyio.sleep(0.2)
                await on_outcome(SimpleNamespace(episode_id="e0"), _record(0, True))

            async with anyio.create_task_group() as tg:
                tg.start_soon(healthy)
                for n in range(1, INFRA_BREAKER + 1):
                    await on_outcome(SimpleNamespace(episode_id=f"e{n}"), _record(n, False))

    queue = SimpleNamespace(stopped=False, settle=lambda spec, record: None)
    queue.stop = lambda: setattr(queue, "stopped", True)
    prep = SimpleNamespace(
        service=SimpleNamespace(observe=seen.append),
        best=SimpleNamespace(observe=lambda record: None),
        pareto=None,
        cost=None,
        config=SimpleNamespace(best=False),
    )
    breaker = ev.Breaker()
    with anyio.fail_after(10):
        await ev._run_episodes(prep, None, Runtime(), queue, breaker, None)  # type: ignore[arg-type]
    assert queue.stopped
    # the healthy episode ended after the trip: the reason still names the streak that tripped
    assert f"stopped after {INFRA_BREAKER} episodes in a row" in (breaker.reason() or "")
    assert any(r.counts for r in seen), "the healthy server's episode was cancelled"
