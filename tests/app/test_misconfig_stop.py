"""A misconfigured run of a user's agent stops after its first block (issue 41 item 3).

Before, ``--slots`` naming a module the agent never calls, or an agent that
calls a module the run refuses, or one that crashes on most tasks, ran to the
end and printed a confident-looking table of zeros. Each case here must stop
with one line naming what to change; ``--keep-going`` runs on. In process
with the probe agent of tests/helpers/agent_probes.py (about 1 s a run), plus one
run through the command line for the exit status.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentbus.app.misconfig import MisconfigWatch
from agentbus.core.errors import UserError
from tests.helpers.agent_probes import probe_run

ROOT = Path(__file__).resolve().parents[2]
OK = ["ok-1", "ok-2", "ok-3"]


def test_a_module_the_run_refuses_in_most_episodes_stops_the_run(tmp_path: Path) -> None:
    # the probe calls planner and solver; the run declares planner and critic
    with pytest.raises(UserError) as caught:
        probe_run(tmp_path, OK, slots=["planner", "critic"])
    line = str(caught.value)
    assert "\n" not in line
    assert "module 'solver', which is no slot of this run, in 4 of the first 4" in line
    assert "--unmapped MODEL" in line and "--keep-going" in line
    assert not (tmp_path / "run" / "results.json").exists()  # no table of zeros


def test_a_declared_slot_no_episode_called_stops_the_run(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no episode of the first 8 called slot 'critic'"):
        probe_run(tmp_path, OK, slots=["planner", "solver", "critic"])


def test_a_majority_of_agent_failures_stops_the_run(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        probe_run(tmp_path, ["crash-1", "crash-2", "crash-3", "ok-1"])
    line = str(caught.value)
    # judged after each block of 4 (one task under every coalition), over all so far
    assert re.search(
        r"(4|8|12) of the first (4|8|12) episodes were the agent's own failures \(crashed", line
    )
    assert "the probe crashed on purpose" in line


def test_keep_going_runs_on(tmp_path: Path) -> None:
    run_dir, _ = probe_run(tmp_path, OK, slots=["planner", "critic"], keep_going=True)
    results = json.loads((run_dir / "results.json").read_text())
    assert results["agent_failures"]["by_kind"] == {"agent_refused": 12}


def test_a_slot_switched_off_somewhere_may_go_uncalled() -> None:
    watch = MisconfigWatch(["planner", "critic"], 1, maybe_off=["critic"])
    watch.calls["planner"] = 1
    assert watch.judge() is None
    assert "'critic'" in (MisconfigWatch(["planner", "critic"], 1).judge() or "")


def test_the_command_line_says_it_in_one_line_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentbus.app.run import main

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": t, "question": "1+1?", "answer": "2"}) + "\n"
                             for t in OK))  # fmt: skip
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "helpers"))
    status = main(
        ["--agent", "agent_probes:run", "--dataset", str(tasks), "--slots", "planner,critic",
         "--sim-speed", "0", "--no-plots", "--progress", "off", "--no-preflight",
         "--run-dir", str(tmp_path / "run")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2, err[-2000:]
    assert err.strip().count("\n") == 0 and "misconfigured" in err
