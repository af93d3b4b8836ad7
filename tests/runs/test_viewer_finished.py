"""A finished run as the viewer shows it (issue 50 item 6 and 5).

Before: a finished run's episodes/s and tokens/s were counted over a window
ending at the wall clock, so they kept falling while the page was open; a
run that stopped early read "finished" with no reason; and no table said
how many of a coalition's episodes were the agent's own failures. The
figures come from :class:`agentbus.runs.run_state.RunState` (``/api/status``
of the viewer and the live dashboard), folded from the events a run writes.
"""

from __future__ import annotations

from pathlib import Path

from agentbus.app.report import run_ending
from agentbus.runs.run_state import RunState

STATIC = Path(__file__).resolve().parents[2] / "agentbus" / "runs" / "static"
STOP = "misconfigured: 3 of the first 4 episodes were the agent's own failures"


def _events() -> list[dict]:
    out: list[dict] = [{"type": "run.started", "seq": 1, "ts": 1000.0, "total": 8}]
    for i in range(8):
        coalition = ["solver"] if i % 2 else []
        crash = i in (0, 2, 4)
        out.append(
            {
                "type": "episode.ended",
                "seq": i + 2,
                "ts": 1000.0 + 2.5 * (i + 1),  # 8 episodes in 20 s
                "episode_id": f"sim:strong|{'+'.join(coalition) or '-'}|t{i // 2}|r0",
                "task_id": f"t{i // 2}",
                "coalition": coalition,
                "test_model": "sim:strong",
                "outcome": {
                    "reward": 0.0 if crash else 1.0,
                    "success": not crash,
                    "error_kind": "agent_crash" if crash else None,
                    "prompt_tokens": 100,
                    "completion_tokens": 50,
                },
            }
        )
    out.append({"type": "run.finished", "seq": 10, "ts": 1020.0, "stopped": STOP})
    return out


def test_a_finished_runs_rates_are_over_its_own_duration_and_its_stop_is_named() -> None:
    state = RunState()
    for event in _events():
        state.apply(event)
    early, late = state.summary(now=1021.0), state.summary(now=1_000_000.0)
    for s in (early, late):
        assert s["episodes_per_s"] == 8 / 20
        assert s["tokens_per_s"] == 8 * 150 / 20
        assert s["stopped"] == STOP
    rows = {r["key"]: r for r in late["coalitions"]}
    assert rows[""]["agent_failures"] == 3 and rows["solver"]["agent_failures"] == 0


def test_the_page_shows_the_stop_reason_and_the_agent_failures_per_coalition(
    tmp_path: Path,
) -> None:
    app = (STATIC / "app.js").read_text()
    assert '"stopped: " + state.stopped' in app and "s.stopped" in app
    assert "agent failures)" in app and "c.agent_failures" in app
    # a log with no run.finished reads as agentbus.report words it (before: "log snapshot")
    log = tmp_path / "events.jsonl"
    log.write_text('{"type": "run.started", "seq": 1, "ts": 1.0}\n')
    partial = "partial: the run was interrupted before its end"
    assert partial in app and partial in (run_ending(log) or "")


def _episode(seq: int, ts: float, task: str) -> dict:
    return {
        "type": "episode.ended",
        "seq": seq,
        "ts": ts,
        "episode_id": f"sim:strong|-|{task}|r0",
        "task_id": task,
        "coalition": [],
        "test_model": "sim:strong",
        "outcome": {"reward": 1.0, "success": True, "prompt_tokens": 100, "completion_tokens": 50},
    }


def test_a_resumed_runs_rates_are_over_each_process_and_not_the_gap_between() -> None:
    """Cut off after 10 s, resumed an hour later for 10 s more: 8 episodes in 20 s of running.

    Before, the span began at the last run.started: 8 episodes over 10 s (0.8/s).
    """
    state = RunState()
    state.apply({"type": "run.started", "seq": 1, "ts": 1000.0, "total": 8})
    for i in range(4):  # the first process, killed: no run.finished
        state.apply(_episode(i + 2, 1002.5 + 2.5 * i, f"t{i}"))
    state.apply({"type": "run.started", "seq": 6, "ts": 4600.0, "total": 8})
    for i in range(4, 8):
        state.apply(_episode(i + 3, 4600.0 + 2.5 * (i - 3), f"t{i}"))
    state.apply({"type": "run.finished", "seq": 11, "ts": 4610.0})
    s = state.summary(now=1_000_000.0)
    assert s["episodes_per_s"] == 8 / 20
    assert s["tokens_per_s"] == 8 * 150 / 20 and s["duration_s"] == 20.0


def test_a_log_cut_short_keeps_its_rates_while_the_viewer_stays_open() -> None:
    """The viewer marks a log without run.finished as over (nothing more will come)."""
    state = RunState()
    state.apply({"type": "run.started", "seq": 1, "ts": 1000.0, "total": 8})
    for i in range(5):
        state.apply(_episode(i + 2, 1002.0 + 2.0 * i, f"t{i}"))
    state.interrupted = True
    early, late = state.summary(now=1011.0), state.summary(now=1_000_000.0)
    assert early["episodes_per_s"] == late["episodes_per_s"] == 5 / 10
    assert late["duration_s"] == 10.0 and late["finished"] is False
