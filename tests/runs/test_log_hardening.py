"""Exports and readers that hold against their data (issue 40, item 6).

* CSV cells that a spreadsheet would run as a formula (``=``, ``+``, ``-``,
  ``@``, tab, CR first) are written with a leading ``'``;
* an ``episode.ended`` with a field of the wrong type (``"prompt_tokens":
  "x"``) is one line naming its line number in ``agentbus.export`` and
  ``agentbus.load``, and the viewer's scan leaves it out and shows the rest;
* resume refuses counted outcomes no run writes: a reward outside [0, 1], a
  success flag that is no boolean, a success that was never started.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentbus.core.errors import UserError
from agentbus.export import main as export_main
from agentbus.runs.frames import csv_cell, episode_rows
from agentbus.runs.runlog import ReadOnlyStore
from agentbus.runs.store import RunStore


def _ended(eid: str, task: str, **outcome: Any) -> dict[str, Any]:
    return {
        "v": 1,
        "type": "episode.ended",
        "episode_id": eid,
        "task_id": task,
        "counts": True,
        "coalition": [],
        "slots": ["planner"],
        "assignment": {"planner": "sim:weak"},
        "env": "math",
        "outcome": {"reward": 1.0, "success": True, "steps": 1, **outcome},
    }


def _started(eid: str) -> dict[str, Any]:
    return {"v": 1, "type": "episode.started", "episode_id": eid}


def _write(run_dir: Path, events: list[dict[str, Any]]) -> None:
    run_dir.mkdir(exist_ok=True)
    (run_dir / "events.jsonl").write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))


def test_csv_cells_that_start_a_formula_are_escaped(tmp_path: Path) -> None:
    evil = ['=HYPERLINK("http://x","y")', "@SUM(A1)", "+1+1", "-2+3", "\tx", "\rx"]
    events = []
    for i, task in enumerate(evil):
        events += [_started(f"e{i}"), _ended(f"e{i}", task)]
    _write(tmp_path / "run", events)
    out = tmp_path / "out.csv"
    assert export_main([str(tmp_path / "run"), "--out", str(out)]) == 0
    with open(out, newline="") as fh:
        cells = [row["task_id"] for row in csv.DictReader(fh)]
    assert cells == ["'" + t for t in evil]
    assert csv_cell("plain") == "plain" and csv_cell(-1.5) == -1.5


def test_a_malformed_event_is_one_line_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    _write(
        run,
        [
            _started("a"),
            _ended("a", "t1"),
            _started("b"),
            _ended("b", "t2", prompt_tokens="x"),
            _started("c"),
            _ended("c", "t3"),
        ],
    )
    assert export_main([str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "line 4" in err and "malformed" in err
    with pytest.raises(UserError, match="line 4"):
        episode_rows(run)
    seen: list[int] = []

    def sink(event: dict[str, Any], index: int) -> None:
        int(event.get("outcome", {}).get("prompt_tokens", 0))  # the dashboard's own fold
        seen.append(index)

    ReadOnlyStore.prepare(run).scan(sink)
    assert seen == [0, 1, 2, 4, 5]  # the rest is shown
    assert "line 4: malformed episode.ended event left out" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("events", "word"),
    [
        ([_started("a"), _ended("a", "t", reward=5)], "not a number in [0, 1]"),
        ([_started("a"), _ended("a", "t", reward=-0.5)], "not a number in [0, 1]"),
        ([_started("a"), _ended("a", "t", reward="1")], "not a number in [0, 1]"),
        ([_started("a"), _ended("a", "t", success="yes")], "not true or false"),
        ([_started("a"), _ended("a", "t"), _ended("b", "t")], "never started"),
    ],
)
def test_resume_refuses_impossible_outcomes(
    tmp_path: Path, events: list[dict[str, Any]], word: str
) -> None:
    run = tmp_path / "run"
    RunStore.open(run, {}).close()
    _write(run, [_started("a"), _ended("a", "t")])
    RunStore.open(run, {}).close()  # a plausible log resumes
    _write(run, events)
    with pytest.raises(UserError, match="is not resumed") as refused:
        RunStore.open(run, {})
    assert word in str(refused.value)
