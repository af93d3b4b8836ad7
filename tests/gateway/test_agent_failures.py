"""A user's agent's failures are outcomes of their own kind, shown wherever outcomes are.

Issue 41: an agent that crashed, hung, printed no result or called a module
the run refuses was counted as a wrong answer, and only one console line said
so. Here a probe agent (tests/helpers/agent_probes.py) fails each way on one task of
nine, in process (about 3 s); every report must name the kinds apart while
v(S) still counts them as the agent's zeros.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentbus.core.outcome import AGENT_ENDINGS
from agentbus.gateway.actors import failure_kind
from agentbus.gateway.runners import AgentFailed
from agentbus.gateway.session import Session
from agentbus.runs.episodes import EpisodeIndex
from agentbus.runs.frames import episode_rows
from agentbus.runs.run_state import RunState
from agentbus.runs.transcript import coalition_diff, transcript
from tests.helpers.agent_probes import probe_run

HERE = Path(__file__).resolve().parent
STATIC = HERE.parents[1] / "agentbus" / "runs" / "static"
TASKS = ["crash-1", "hang-1", "empty-1", "refused-1", "ok-1", "ok-2", "ok-3", "ok-4", "ok-5"]
KINDS = {
    "crash-1": "agent_crash",
    "hang-1": "agent_timeout",
    "empty-1": "agent_no_result",
    "refused-1": "agent_refused",
}


def ended(run_dir: Path) -> list[dict[str, Any]]:
    events = [orjson.loads(line) for line in (run_dir / "events.jsonl").read_bytes().splitlines()]
    return [e for e in events if e.get("type") == "episode.ended"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    # --keep-going: a first block that is one of the failing tasks would stop the run
    # 3 s: the hanging task's cost, and room for the others on a loaded machine
    tmp = tmp_path_factory.mktemp("agent_failures")
    return probe_run(tmp, TASKS, keep_going=True, agent_timeout_s=3.0)


def test_each_failure_is_its_own_kind_and_counts_as_the_agents_zero(
    run: tuple[Path, str],
) -> None:
    run_dir, _ = run
    episodes = ended(run_dir)
    assert len(episodes) == 4 * len(TASKS)
    for e in episodes:
        outcome = e["outcome"]
        kind = KINDS.get(e["task_id"])
        assert outcome.get("error_kind") == kind, (e["task_id"], outcome.get("reason"))
        if kind is not None:
            assert outcome["reward"] == 0 and outcome.get("error") is None
            assert outcome["reason"] != "done"  # the agent's failure, not "done"
    results = json.loads((run_dir / "results.json").read_text())
    failures = results["agent_failures"]
    assert failures["failed"] == 16 and failures["episodes"] == 36
    assert failures["by_kind"] == {k: 4 for k in KINDS.values()}
    assert failures["by_coalition"][""] == {k: 1 for k in KINDS.values()}
    # counted: every cell has a counting record, so v(S) is over all nine tasks
    for summary in results["models"].values():
        assert all(c["n"] == len(TASKS) for c in summary["coalitions"].values())


def test_every_report_names_the_kinds(run: tuple[Path, str]) -> None:
    run_dir, console = run
    console = " ".join(console.split())  # rich wraps long lines
    assert re.search(r"agent failures .*16 of 36 episodes: the agent crashed 4", console)
    assert "the agent ran past its time limit 4" in console
    # no --unmapped was given: the calls were refused, not sent anywhere
    assert "refused (no --unmapped given): checker 4" in console
    assert "sent to --unmapped" not in console
    markdown = (run_dir / "results.md").read_text()
    section = markdown.split("## Agent failures", 1)[1]
    assert "| `agent_timeout` (the agent ran past its time limit) | 4 |" in section
    assert "| planner+solver | 1 | 1 | 1 | 1 |" in section
    rows = {r["episode_id"]: r for r in episode_rows(run_dir)}
    assert len(rows) == 36
    for r in rows.values():
        kind = KINDS.get(r["task_id"])
        assert r["failure_kind"] == (kind or ("" if r["success"] else "wrong"))
        assert r["expected"] == str(TASKS.index(r["task_id"]) + 1)
        if kind is None:
            assert r["verdict"] in ("right", "wrong") and r["answer"] is not None
        else:
            assert r["verdict"] == kind and r["answer"] is None and r["reason"] != "done"
    index = EpisodeIndex()
    state = RunState()
    for line, e in enumerate(ended(run_dir)):
        index.add(e, line)
        state.apply(e)
    assert set(KINDS.values()) <= set(index.facets()["failures"])
    assert len(index.select(failure="agent_timeout")) == 4
    assert state.summary()["agent_failures"] == 16 and state.summary()["errors"] == 0


def test_the_episode_page_puts_answer_expected_and_verdict_first(run: tuple[Path, str]) -> None:
    run_dir, _ = run
    by_task = {e["task_id"]: e for e in ended(run_dir) if not e["coalition"]}
    ok = transcript(by_task["ok-2"])["verdict"]
    assert ok["expected"] == "6" and ok["verdict"] in ("right", "wrong") and "answer" in ok
    assert transcript(by_task["crash-1"])["verdict"]["verdict"] == "agent_crash"
    views = (STATIC / "views.js").read_text()
    assert 'answerBlock(v),\n    el("strong"' in views  # before the solved line and details


def test_a_gateway_agents_diff_steps_through_its_model_calls(run: tuple[Path, str]) -> None:
    run_dir, _ = run
    ok = {tuple(e["coalition"]): e for e in ended(run_dir) if e["task_id"] == "ok-1"}
    diff = coalition_diff(ok[()], ok[("planner", "solver")])
    assert diff["unit"] == "call"
    steps = [row["step"] for row in diff["steps"]]
    assert steps == [0, 1, 2, 3]  # the task, the planner's call, the solver's, the verdict
    assert diff["first_divergent_step"] == 1  # the planner's answer differs first


@pytest.mark.parametrize(
    ("message", "refused", "kind"),
    [
        ("agent ran past its time limit of 20s", 0, "agent_timeout"),
        ("agent command exited with status 1: Traceback ... time limit", 0, "agent_crash"),
        ("agent raised RecursionError: maximum recursion depth exceeded", 0, "agent_crash"),
        ("agent command printed no JSON object line on stdout", 0, "agent_no_result"),
        ("pkg.mod:run's result has neither 'answer' nor 'reward'", 0, "agent_no_result"),
        ("agent command's stdout passed its cap of 1048576 bytes; killed", 0, "agent_cap"),
        ("agent raised NotFoundError: 404", 2, "agent_refused"),
        ("agent ran past its time limit of 5s", 2, "agent_timeout"),
    ],
)
def test_runner_messages_map_to_kinds(message: str, refused: int, kind: str) -> None:
    session = Session(episode_id="e", task_id="t", slots={}, off=frozenset())
    if refused:
        session.stats("checker").refused = refused
    assert failure_kind(AgentFailed(message), session) == kind


def test_the_dashboard_counts_what_the_counting_rule_counts() -> None:
    app = (STATIC / "app.js").read_text()
    listed = re.search(r"const AGENT_ENDINGS = \[(.*?)\];", app, re.S)
    assert listed is not None
    assert set(re.findall(r'"(\w+)"', listed.group(1))) == set(AGENT_ENDINGS)
    assert 'id="agent-failures"' in (STATIC / "index.html").read_text()
