"""A table cannot look confident when nothing fit (issue 50 item 3).

Before, an agent whose answers the scorer could not read (prose where a
number was expected, a constant) ran to the end and printed a table of zeros
with exit 0. Now the run stops once two tasks are complete, in one line that
shows what the agent answered against what the scorer expected, unless
``--keep-going``. And the misconfiguration stop judges complete tasks, so
the same agent gets the same verdict whether its crashes end first (in
process) or last (a command paying its start-up): before, episodes were
judged in the order they ended.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentbus.app.misconfig import MisconfigWatch
from agentbus.core.errors import UserError
from agentbus.core.outcome import Outcome
from agentbus.core.record import EpisodeRecord
from tests.helpers.agent_probes import probe_run

OK = [f"ok-{n}" for n in range(4)]
EIGHT = [f"ok-{n}" for n in range(8)]  # 32 episodes: what "all the same" needs


async def prose(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """An agent that answers in words where the tasks expect a number (no model call needed)."""
    for module in ("planner", "solver"):
        await ctx.openai.chat.completions.create(
            model=module, messages=[{"role": "user", "content": task["question"]}]
        )
    return {"answer": "I worked it out carefully and the result follows."}


async def constant(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """An agent whose answer is a number, always the same wrong one."""
    for module in ("planner", "solver"):
        await ctx.openai.chat.completions.create(
            model=module, messages=[{"role": "user", "content": task["question"]}]
        )
    return {"answer": "-7"}


def test_unreadable_answers_stop_the_run_with_examples(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        probe_run(tmp_path, OK, agent="tests.app.test_nothing_fit:prose")
    line = str(caught.value)
    assert "\n" not in line
    assert line.startswith("nothing fit: 8 of the first 8 scored answers do not have the form")
    assert re.search(
        r"first: answered 'I worked it out.*' where the scorer expected '[1-4]'; answered",
        line,
    )
    assert "--scorer" in line and "--keep-going" in line
    assert not (tmp_path / "run" / "results.json").exists()


def test_every_episode_scoring_the_same_stops_the_run(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        probe_run(tmp_path, EIGHT, agent="tests.app.test_nothing_fit:constant")
    line = str(caught.value)
    assert "every one of the first 32 scored episodes (8 tasks, every coalition) scored 0" in line
    assert re.search(r"answered '-7' where the scorer expected '[1-8]'", line)


def test_keep_going_runs_on_and_a_sound_agent_is_not_stopped(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    run_dir, _ = probe_run(
        tmp_path / "a", EIGHT, agent="tests.app.test_nothing_fit:constant", keep_going=True
    )
    results = json.loads((run_dir / "results.json").read_text())
    assert all(c["mean"] == 0 for c in results["models"]["sim:strong"]["coalitions"].values())
    (tmp_path / "b").mkdir()
    run_dir, _ = probe_run(tmp_path / "b", OK)  # the probe: planner then solver, ANSWER line
    assert (run_dir / "results.json").exists()


def _record(task: int, coalition: tuple[str, ...], crash: bool) -> EpisodeRecord:
    outcome = Outcome(
        reward=0.0 if crash else float(task % 2),
        error_kind="agent_crash" if crash else None,
        reason="boom" if crash else "done",
        details={"gateway": {"modules": {"planner": {"calls": 1}, "solver": {"calls": 1}}}},
    )
    return EpisodeRecord(
        episode_id=f"sim:strong|{'+'.join(coalition) or '-'}|t{task}|r0",
        task_id=f"t{task}",
        test_model="sim:strong",
        coalition=coalition,
        slots=("planner", "solver"),
        counts=outcome.counts_for_value,
        outcome=outcome,
    )


def test_crashes_that_end_first_do_not_decide_the_verdict() -> None:
    # a quarter of the episodes crash (one coalition of each task); in process the
    # crashes end first, so the first four episodes to end are all crashes
    coalitions = [(), ("planner",), ("solver",), ("planner", "solver")]
    crashes = [_record(t, ("planner", "solver"), True) for t in range(4)]
    healthy = [_record(t, c, False) for t in range(4) for c in coalitions[:3]]
    watch = MisconfigWatch(["planner", "solver"], 4)
    lines = [watch.record(r) for r in [*crashes, *healthy]]
    assert [x for x in lines if x] == []
    assert watch.tasks == 4 and sum(watch.failures.values()) == 4
    # a majority of crashes still stops, whatever the order
    worse = MisconfigWatch(["planner", "solver"], 4)
    many = [_record(0, c, True) for c in coalitions[:3]] + [_record(0, coalitions[3], False)]
    assert "3 of the first 4 episodes were the agent's own failures" in str(
        [worse.record(r) for r in many][-1]
    )


def _scored(task: int, coalition: tuple[str, ...], answer: str, reward: float) -> EpisodeRecord:
    outcome = Outcome(
        reward=reward,
        details={
            "gateway": {"modules": {"planner": {"calls": 1}, "solver": {"calls": 1}}},
            "result": {"answer": answer},
            "expected": "7",
        },
    )
    return EpisodeRecord(
        episode_id=f"sim:strong|{'+'.join(coalition) or '-'}|t{task}|r0",
        task_id=f"t{task}",
        test_model="sim:strong",
        coalition=coalition,
        slots=("planner", "solver"),
        outcome=outcome,
    )


def test_an_agent_that_abstains_when_unsure_is_not_stopped() -> None:
    # examples/crewai answers "no agreed answer" in most episodes of a weak run, and
    # right in the rest: its answers fit (the guard fired on it at 6 of 8 unreadable)
    coalitions = [(), ("planner",), ("solver",), ("planner", "solver")]
    watch = MisconfigWatch(["planner", "solver"], 4)
    for t in range(4):
        for c in coalitions:
            right = c == ("planner", "solver")
            watch.record(_scored(t, c, "7" if right else "no agreed answer", float(right)))
    assert watch.reason is None and watch.unreadable == 12
    never = MisconfigWatch(["planner", "solver"], 4)
    lines = [
        never.record(_scored(t, c, "no agreed answer", 0.0)) for t in range(2) for c in coalitions
    ]
    assert (lines[-1] or "").startswith("nothing fit: 8 of the first 8 scored answers")
