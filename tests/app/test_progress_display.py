"""What the progress display says during a run (issue 32 item 6, issue 34 item 6).

Each glitch a user saw is a test here: ``293/288`` with ``--best``, ``|
finished`` after Ctrl-C, ``/3200`` in an adaptive run, ``+0.000 [-0.533,
+0.533]`` before anything is known, no time remaining, tok/s from the
lifetime tokens of ended episodes (cache hits included) instead of what the
servers served, ``0.30 ep/s`` from infrastructure failures while a server was
dead, ``not estimable yet ... | finished``. The last two tests run the CLI as a
user does: in a pseudo-terminal (tmux, 80 columns) where the cost line must
show above one live frame (no stale frame left behind), and with Ctrl-C.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentbus.runs.progress import run_console
from agentbus.runs.run_state import RunState, eta_text

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--no-plots", "--sim-speed", "0", "--sim-transport", "inprocess"]


def ended(eid: str, *, kind: str = "coalition", tokens: int = 10, **outcome: Any) -> dict[str, Any]:
    return {
        "type": "episode.ended",
        "episode_id": eid,
        "kind": kind,
        "test_model": "sim:strong",
        "coalition": [],
        "outcome": {"reward": 1.0, "success": True, "prompt_tokens": tokens, **outcome},
    }


def snapshot(tasks: int, estimable: bool = True) -> dict[str, Any]:
    row = {"value": 0.0, "ci_low": -0.533, "ci_high": 0.533}
    return {
        "type": "attribution.snapshot",
        "estimable": estimable,
        "reason": None if estimable else "no complete task block yet",
        "admitted_tasks": tasks,
        "models": {"sim:strong": {"shapley": {"planning": row}}},
    }


def test_best_episodes_never_push_done_past_total() -> None:
    state = RunState(4)
    state.apply({"type": "run.started", "total": 4, "ts": 100.0})
    for i in range(4):
        state.apply({**ended(f"c{i}"), "ts": 101.0})
    state.apply({**ended("b0", kind="best"), "ts": 102.0})
    state.apply({**ended("b1", kind="best"), "ts": 102.0})
    line = state.line(now=103.0)
    assert "episodes 4/4 +2 best" in line and "6/4" not in line


def test_adaptive_total_is_a_cap_and_the_eta_says_so() -> None:
    state = RunState(3200, total_is_cap=True)
    state.apply({"type": "run.started", "total": 3200, "ts": 100.0})
    for i in range(10):
        state.apply({**ended(f"e{i}"), "ts": 105.0})
    line = state.line(now=110.0)
    assert "episodes 10 (adaptive, at most 3200)" in line and "/3200" not in line
    assert "ETA at most" in line


def test_eta_from_the_counted_rate() -> None:
    state = RunState(100)
    state.apply({"type": "run.started", "total": 100, "ts": 100.0})
    for i in range(20):
        state.apply({**ended(f"e{i}"), "ts": 101.0 + i})
    assert state.eta_s(now=120.0) == pytest.approx(80 / 1.0)  # 20 episodes in 20 s
    assert "ETA 1m20s" in state.line(now=120.0)
    assert eta_text(3725) == "ETA 1h02m" and eta_text(9) == "ETA 9s"
    state.apply({"type": "run.finished", "ts": 121.0})
    assert "ETA" not in state.line(now=121.0)


def test_no_interval_before_two_complete_tasks() -> None:
    state = RunState(16)
    state.apply(snapshot(tasks=1))
    line = state.line()
    assert "+0.000" not in line and "-0.533" not in line
    assert "not estimable yet" in line
    state.apply(snapshot(tasks=2))
    assert "planning=+0.000[-0.533,+0.533]" in state.line()


def test_a_finished_run_is_not_estimable_not_yet() -> None:
    state = RunState(4)
    state.apply(snapshot(tasks=0, estimable=False))
    assert "not estimable yet" in state.line()
    state.apply({"type": "run.finished"})
    assert "not estimable: no complete task block yet" in state.line()


def test_infrastructure_failures_make_no_episode_rate() -> None:
    state = RunState(4)
    state.apply({"type": "run.started", "total": 4, "ts": 100.0})
    for i in range(9):  # a dead server: every episode ends as an infrastructure failure
        state.apply({**ended(f"e{i}", error_kind="infra", error="refused"), "ts": 101.0})
    s = state.summary(now=130.0)
    assert s["episodes_per_s"] == 0.0 and s["done"] == 0 and s["errors"] == 9
    assert s["eta_s"] is None


def test_tokens_per_second_is_what_the_servers_served_in_the_window() -> None:
    state = RunState(100)
    state.apply({"type": "run.started", "total": 100, "ts": 100.0})
    state.sample_served(1_000, now=100.0)
    # an episode ends carrying its lifetime tokens (cache hits included): 60,000
    state.apply({**ended("e0", tokens=60_000), "ts": 109.0})
    state.sample_served(1_500, now=110.0)  # the servers served 500 tokens in 10 s
    assert state.summary(now=110.0)["tokens_per_s"] == pytest.approx(50.0)
    state.sample_served(1_500, now=120.0)  # nothing served (all answered from the cache)
    state.sample_served(1_500, now=145.0)
    assert state.summary(now=145.0)["tokens_per_s"] == pytest.approx(0.0)


def test_at_one_episode_a_minute_the_eta_holds_still_between_lines() -> None:
    """Issue 39: a 30 s window held 0 or 1 episodes; '0.00 ep/s' and the ETA jumped 3x."""
    state = RunState(100)
    t0 = 1_000.0
    state.apply({"type": "run.started", "total": 100, "ts": t0})
    etas: list[float] = []
    lines: list[str] = []
    ended_n = 0
    for tick in range(0, 45 * 60, 5):  # a line every 5 s for 45 minutes
        while (ended_n + 1) * 60.0 <= tick:
            ended_n += 1
            state.apply({**ended(f"e{ended_n}"), "ts": t0 + ended_n * 60.0})
        if tick >= 5 * 60:  # past the first few episodes
            eta = state.eta_s(now=t0 + tick)
            assert eta is not None, f"no ETA at {tick} s"
            etas.append(eta)
            lines.append(state.line(now=t0 + tick))
    jumps = [max(a, b) / min(a, b) for a, b in itertools.pairwise(etas)]
    assert max(jumps) <= 1.5, max(jumps)
    assert all("0.00 ep/s" not in line for line in lines)
    assert "ep/min" in lines[-1]
    rate = float(lines[-1].split(" ep/min")[0].rsplit(" ", 1)[1])
    assert rate == pytest.approx(1.0, abs=0.1)


def test_output_tokens_per_second_apart_from_prompt_tokens() -> None:
    """A small model reads 290 tokens/s and writes 8: one mixed figure hid the 8."""
    state = RunState(100)
    state.apply({"type": "run.started", "total": 100, "ts": 100.0})
    state.sample_served((0, 0), now=100.0)
    state.sample_served((2_900, 80), now=110.0)
    s = state.summary(now=110.0)
    assert s["output_tokens_per_s"] == pytest.approx(8.0)
    assert s["prompt_tokens_per_s"] == pytest.approx(290.0)
    assert "8 out tok/s (290 prompt)" in state.line(now=110.0)


def test_console_text_is_not_read_as_markup() -> None:
    import io

    buffer = io.StringIO()
    console = run_console(file=buffer, width=200)
    console.print("cost: no price for these models; add them under [prices] for dollars")
    console.print("[bold]x[/bold] and [/] stay as written")  # no MarkupError either
    text = buffer.getvalue()
    assert "under [prices] for dollars" in text and "[bold]x[/bold] and [/]" in text


def _run(*args: str, **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentbus.run", *FAST, *args],
        cwd=ROOT,
        text=True,
        **kw,
    )


@pytest.mark.slow
def test_ctrl_c_ends_the_progress_with_stopped_not_finished(tmp_path: Path) -> None:
    proc = _run(
        "--tasks", "40", "--progress", "plain", "--run-dir", str(tmp_path / "run"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 120
    for line in proc.stdout:  # wait until episodes are being counted, then Ctrl-C
        lines.append(line)
        if line.startswith("episodes ") and not line.startswith("episodes 0/"):
            break
        assert time.monotonic() < deadline
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    lines += out.splitlines()
    last = [line for line in lines if line.startswith("episodes ")][-1]
    assert last.rstrip().endswith("| stopped before the end"), last
    assert "finished" not in last
    assert proc.returncode == 130 and "resume" in err + out


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a pseudo-terminal")
def test_live_display_in_a_terminal_keeps_one_frame_and_shows_the_cost_line(
    tmp_path: Path,
) -> None:
    session = f"agentbus-progress-{os.getpid()}"
    done = tmp_path / "exit"
    cmd = (
        f"cd {ROOT} && {sys.executable} -m agentbus.run {' '.join(FAST)} --tasks 8 "
        f"--progress rich --run-dir {tmp_path / 'run'}; echo $? > {done}; sleep 30"
    )
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "60", cmd], check=True
    )
    try:
        deadline = time.monotonic() + 240
        while not done.exists():
            assert time.monotonic() < deadline, "run did not end"
            time.sleep(0.5)
        screen = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", session, "-S", "-"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    assert done.read_text().strip() == "0", screen
    frames = [line for line in screen.splitlines() if line.startswith("episodes ")]
    assert len(frames) == 1 and frames[0].startswith("episodes 128/128"), screen
    lines = screen.splitlines()
    cost = next(i for i, line in enumerate(lines) if "estimate for the whole run" in line)
    assert "at simulated list prices" in " ".join(lines[cost : cost + 2])
    assert cost < lines.index(frames[0])  # printed above the live frame, not under a stale one
    mvp = next(
        i for i, line in enumerate(lines) if line.startswith(("MVP: ", "MVP not identified: "))
    )
    assert mvp > lines.index(frames[0])
    assert "test model" in lines[lines.index(frames[0]) + 2]  # the bar ends its own line


def test_two_long_vllm_specs_get_distinct_short_labels_in_the_line() -> None:
    a = "vllm:http://127.0.0.1:8101/v1#meta-llama/Llama-3.1-8B-Instruct"
    b = "vllm:http://127.0.0.1:8102/v1#meta-llama/Llama-3.1-8B-Instruct"
    row = {"value": 0.1, "ci_low": 0.0, "ci_high": 0.2}
    state = RunState(4)
    state.apply(
        {
            "type": "attribution.snapshot",
            "admitted_tasks": 3,
            "models": {a: {"shapley": {"action": row}}, b: {"shapley": {"action": row}}},
        }
    )
    line = state.line()
    assert "action@Llama-3.1-8B-Inst~@127.0.0.1:8101=" in line
    assert "action@Llama-3.1-8B-Inst~@127.0.0.1:8102=" in line
    assert "vllm:http" not in line
