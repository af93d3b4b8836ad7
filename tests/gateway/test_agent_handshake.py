"""A command agent runs as long-lived workers by default when it answers the worker handshake
(issue 50.7), and as a process per episode, said in one line, when it does not.

* a command that prints ``{"agentbus_worker": 1}`` and reads its episode lines
  from ``AGENTBUS_WORKER_FD`` serves episode after episode in one sandboxed
  process (its start paid once), each with that episode's own token;
* a per-episode command (task JSON on stdin until it ends) is never left
  waiting: its candidate gets an empty stdin and no token, and the run falls
  back to a process per episode with one console line saying why;
* ``--no-agent-workers`` and ``--agent-workers`` decide without a handshake,
  and a blame replay is a process per episode unless the run forced workers.

Each test fails on the code before the handshake (served [1, 1, 1]: a
process per episode; no fallback line; ``agent_workers`` False by default).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentbus.app.cli_args import parse_command
from agentbus.app.config import build_config
from agentbus.app.external import make_runner, replay_config
from agentbus.gateway.auto_workers import AutoCommandAgent
from agentbus.gateway.runners import CommandAgent
from agentbus.gateway.workers import WorkerAgent
from tests.helpers.agent_contexts import context
from tests.helpers.sandbox_marks import needs_bwrap

TASKS = str(Path(__file__).parents[2] / "examples" / "plain_openai" / "tasks.jsonl")

#: a worker when agentbus says so (AGENTBUS_WORKER), a process per episode otherwise
BOTH = r"""
import json, os, sys
if os.environ.get("AGENTBUS_WORKER"):
    print("starting up", flush=True)
    print(json.dumps({"agentbus_worker": 1}), flush=True)
    with open(int(os.environ.get("AGENTBUS_WORKER_FD", "0"))) as lines:
        for served, line in enumerate(lines, 1):
            msg = json.loads(line)
            print(json.dumps({"answer": msg["task"]["id"], "served": served,
                              "pid": os.getpid(), "key": msg["api_key"]}), flush=True)
else:
    task = json.load(sys.stdin)
    print(json.dumps({"answer": task["id"], "served": 1, "pid": os.getpid(),
                      "key": os.environ["OPENAI_API_KEY"]}))
"""

#: a per-episode agent, as most are written: stdin read to its end
PLAIN = r"""
import json, os, sys
task = json.load(sys.stdin)
print(json.dumps({"answer": task["id"], "key": os.environ.get("OPENAI_API_KEY")}))
"""


async def _three(tmp_path: Path, script: str, **flags: object) -> tuple[list[dict], object]:
    (tmp_path / "agent.py").write_text(script)
    config = build_config(
        {"agent_cmd": f"{sys.executable} agent.py", "slots": ["a"], "dataset": TASKS, **flags}
    )
    runner = make_runner(config, tmp_path)
    try:
        return [await runner.run({"id": f"t{n}"}, context(n)) for n in range(3)], runner
    finally:
        await runner.aclose()


@needs_bwrap
async def test_a_command_that_answers_the_handshake_runs_as_one_worker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, runner = await _three(tmp_path, BOTH, agent_processes=1)
    # one sandboxed process served all three, each episode with its own token
    assert [r["served"] for r in results] == [1, 2, 3]
    assert len({r["pid"] for r in results}) == 1
    assert [r["key"] for r in results] == ["token-0", "token-1", "token-2"]
    assert runner.started == 1  # type: ignore[attr-defined]
    err = capsys.readouterr().err
    assert err.count("answered the worker handshake") == 1, err


@needs_bwrap
async def test_a_per_episode_command_falls_back_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, runner = await _three(tmp_path, PLAIN)
    assert [r["answer"] for r in results] == ["t0", "t1", "t2"]
    assert [r["key"] for r in results] == ["token-0", "token-1", "token-2"]
    assert runner.started == 4  # type: ignore[attr-defined]  # the candidate, then one each
    err = capsys.readouterr().err
    assert err.count("did not answer the worker handshake") == 1, err
    assert "it exited without a hello line" in err


def test_the_flags_decide_without_a_handshake() -> None:
    def runner(**flags: object) -> object:
        config = build_config({"agent_cmd": "python a.py", "slots": ["a"], **flags})
        return make_runner(config)

    assert type(runner(agent_workers=False)) is CommandAgent
    assert type(runner(agent_workers=True)) is WorkerAgent
    assert type(runner()) is AutoCommandAgent


def test_the_flags_reach_the_config_and_a_replay_runs_a_process_per_episode() -> None:
    base = ["--agent-cmd", "python w.py", "--dataset", TASKS, "--slots", "planner"]
    assert parse_command(base).config.agent_workers is None
    assert parse_command([*base, "--no-agent-workers"]).config.agent_workers is False
    assert parse_command([*base, "--agent-workers"]).config.agent_workers is True
    auto = parse_command(base).config
    assert replay_config(auto, allow_none=False).agent_workers is False
    forced = parse_command([*base, "--agent-workers"]).config
    assert replay_config(forced, allow_none=False).agent_workers is True
