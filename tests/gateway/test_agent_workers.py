"""``--agent-workers``: one long-lived command agent serves episode after episode (issue 41.7).

* the same process answers task after task, each with that episode's own
  token and base URL from its input line (none in its environment);
* a worker that crashes, runs past its limit or prints a result line past
  the cap fails that episode, and a fresh worker serves the next;
* workers run in the sandbox like every command agent;
* the flag composes through the CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentbus.app.cli_args import parse_command
from agentbus.core.errors import UserError
from agentbus.gateway.context import AgentContext
from agentbus.gateway.isolation import Isolation
from agentbus.gateway.runners import AgentFailed
from agentbus.gateway.workers import WorkerAgent
from tests.helpers.sandbox_marks import needs_bwrap

WORKER = r"""
import json, os, sys, time
served = 0
for line in sys.stdin:
    msg = json.loads(line)
    served += 1
    task = msg["task"]
    print("log: working on", task["id"], flush=True)
    if task.get("crash"):
        sys.stderr.write("worker blew up\n")
        sys.exit(3)
    if task.get("sleep"):
        time.sleep(task["sleep"])
    if task.get("long"):
        print(json.dumps({"answer": "z" * 10000}), flush=True)
        continue
    print(json.dumps({"answer": task["id"], "served": served, "key": msg["api_key"],
                      "base": msg["base_url"], "off": msg["off_slots"],
                      "env_key": os.environ.get("OPENAI_API_KEY"),
                      "pids": len([p for p in os.listdir("/proc") if p.isdigit()])}), flush=True)
"""


def _ctx(n: int) -> AgentContext:
    return AgentContext(
        task_id=f"t{n}",
        base_url=f"http://127.0.0.1:9/e/{n}/v1",
        anthropic_base_url=f"http://127.0.0.1:9/e/{n}",
        api_key=f"token-{n}",
        off_slots=frozenset({"critic"}),
    )


@needs_bwrap
async def test_one_worker_serves_many_episodes_each_with_its_own_token(tmp_path: Path) -> None:
    (tmp_path / "worker.py").write_text(WORKER)
    agent = WorkerAgent(
        f"{sys.executable} worker.py",
        cwd=tmp_path,
        max_processes=1,
        time_limit_s=5,
        isolation=Isolation(),
        result_cap=4096,
    )
    try:
        first = [await agent.run({"id": f"t{n}"}, _ctx(n)) for n in range(3)]
        assert [r["served"] for r in first] == [1, 2, 3] and agent.started == 1
        assert [r["key"] for r in first] == ["token-0", "token-1", "token-2"]
        assert first[2]["base"] == "http://127.0.0.1:9/e/2/v1" and first[0]["off"] == ["critic"]
        assert first[0]["env_key"] is None and first[0]["pids"] <= 3  # sandboxed, no token
        with pytest.raises(AgentFailed, match="status 3 before its result: worker blew up"):
            await agent.run({"id": "x", "crash": True}, _ctx(9))
        assert (await agent.run({"id": "t4"}, _ctx(4)))["served"] == 1  # a fresh worker
        with pytest.raises(AgentFailed, match="result cap of 4096 bytes"):
            await agent.run({"id": "x", "long": True}, _ctx(9))
        with pytest.raises(AgentFailed, match=r"time limit of 0\.5s"):
            agent.time_limit_s = 0.5
            await agent.run({"id": "x", "sleep": 3}, _ctx(9))
        agent.time_limit_s = 5
        assert (await agent.run({"id": "t5"}, _ctx(5)))["served"] == 1
        assert agent.started == 4
    finally:
        await agent.aclose()
    assert agent.idle == []


def test_the_flag_reaches_the_config() -> None:
    tasks = str(Path(__file__).parents[2] / "examples" / "plain_openai" / "tasks.jsonl")
    config = parse_command(
        ["--agent-cmd", "python w.py", "--agent-workers", "--dataset", tasks,
         "--slots", "planner"]
    ).config  # fmt: skip
    assert config.agent_workers is True


def test_workers_need_a_command() -> None:
    tasks = str(Path(__file__).parents[2] / "examples" / "plain_openai" / "tasks.jsonl")
    with pytest.raises(UserError, match="--agent-workers runs an --agent-cmd"):
        parse_command(["--agent-workers", "--dataset", tasks, "--agent", "m:f", "--slots", "a"])
