"""A user's agent's own output where the user looks (issue 50.5).

* a framework's log noise (its own console handler, plain logging, warnings,
  prints) stays off the console in process: it lands in the run directory's
  agent.log, which the console names once;
* a command's and a worker's stderr (and a worker's stdout log lines) land
  there too, line by line, headed by the process and its task;
* a failure keeps the agent's last traceback whole, however much noise came
  before it, and results.md shows it whole (the table's cell names the
  exception line).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentbus.gateway.agent_log import AgentLog
from agentbus.gateway.isolation import Isolation
from agentbus.gateway.runners import AgentFailed, CommandAgent
from agentbus.gateway.workers import WorkerAgent
from attribution.tables import agent_failure_markdown
from tests.helpers.agent_contexts import context
from tests.helpers.cli_run import env_with_repo, python_m

#: an in-process agent whose framework talks on every channel, and that crashes on t2
NOISY = r"""
import asyncio, logging, sys, warnings
from concurrent.futures import ThreadPoolExecutor
POOL = ThreadPoolExecutor(2, thread_name_prefix="fw-pool")  # as smolagents and CrewAI run
chatty = logging.getLogger("chattyfw")
chatty.addHandler(logging.StreamHandler(sys.stderr))  # as LiteLLM and DSPy do
chatty.propagate = False

async def run(task, ctx):
    await asyncio.get_running_loop().run_in_executor(POOL, print, "printed in a pool thread")
    chatty.warning("chattyfw says hello to %s", task["id"])
    logging.getLogger("plainfw").warning("plainfw warns about %s", task["id"])
    warnings.warn("an old parameter")
    print("printed by the agent for", task["id"])
    if task["id"] == "t2":
        def tool_call():
            raise RuntimeError("the tool schema did not fit")
        tool_call()
    return {"answer": "1"}
"""

#: a command (or worker) that prints framework noise, then dies in a deep traceback
CRASH = r"""
import json, os, sys
for i in range(80):
    print(f"WARNING frameworkX: deprecated setting number {i} is still in use", file=sys.stderr)
def ping(n):
    if n == 0:
        raise ValueError("the real cause: a missing field")
    return pong(n - 1)
def pong(n):
    return ping(n - 1)
if os.environ.get("AGENTBUS_WORKER"):
    print(json.dumps({"agentbus_worker": 1}), flush=True)
    print("a worker log line", flush=True)
    with open(int(os.environ.get("AGENTBUS_WORKER_FD", "0"))) as lines:
        lines.readline()
ping(40)
"""


def test_in_process_noise_goes_to_agent_log_and_results_md_keeps_the_traceback(
    tmp_path: Path,
) -> None:
    (tmp_path / "noisy.py").write_text(NOISY)
    (tmp_path / "tasks.jsonl").write_text(
        "".join(f'{{"id": "t{n}", "question": "q", "answer": "1"}}\n' for n in (1, 2))
    )
    env = env_with_repo()
    env["PYTHONPATH"] += f":{tmp_path}"
    proc = python_m(
        "agentbus.run", "--agent", "noisy:run", "--dataset", "tasks.jsonl", "--slots", "a",
        "--no-plots", "--progress", "off", "--run-dir", "run", "--no-preflight", "--keep-going",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    console = proc.stdout + proc.stderr
    noises = ("chattyfw says", "plainfw warns", "an old parameter", "printed by the", "pool thread")
    for noise in noises:
        assert noise not in console, console
    assert console.count("agent.log") == 1, console
    log = (tmp_path / "run" / "agent.log").read_text()
    assert "[t1] WARNING chattyfw: chattyfw says hello to t1" in log
    assert "[t2] WARNING plainfw: plainfw warns about t2" in log
    assert "UserWarning: an old parameter" in log
    assert "[t1 stdout] printed by the agent for t1" in log
    assert "stdout] printed in a pool thread" in log  # [fw-pool_0 stdout]: no task known there
    results = (tmp_path / "run" / "results.md").read_text()
    assert 'raise RuntimeError("the tool schema did not fit")' in results  # the frames, whole
    assert "RuntimeError: the tool schema did not fit" in results.split("```text")[1]


@pytest.mark.parametrize("kind", [CommandAgent, WorkerAgent])
async def test_a_command_failure_keeps_its_whole_traceback_and_its_noise_goes_to_the_log(
    tmp_path: Path, kind: type[CommandAgent] | type[WorkerAgent]
) -> None:
    (tmp_path / "agent.py").write_text(CRASH)
    log = AgentLog(tmp_path / "agent.log")
    agent = kind(
        f"{sys.executable} agent.py", cwd=tmp_path, isolation=Isolation(mode="none"), log=log
    )
    try:
        with pytest.raises(AgentFailed) as failed:
            await agent.run({"id": "t7"}, context(7))
    finally:
        await agent.aclose()
        log.close()
    reason = str(failed.value)
    # the whole traceback (5 KB of frames after 5 KB of warnings): its start and its end
    assert "Traceback (most recent call last):" in reason
    assert reason.count("return pong(n - 1)") == 20 and reason.count("return ping(n - 1)") == 20
    assert reason.rstrip().endswith("ValueError: the real cause: a missing field")
    assert "frameworkX" not in reason  # the noise before it is not the reason
    text = (tmp_path / "agent.log").read_text()
    assert "task t7] WARNING frameworkX: deprecated setting number 79 is still in use" in text
    if kind is WorkerAgent:
        assert "task t7 stdout] a worker log line" in text
    # results.md: the cell names the exception; the section shows the reason whole
    section = agent_failure_markdown(
        {
            "agent_failures": {
                "failed": 1, "episodes": 1, "by_kind": {"agent_crash": 1},
                "by_coalition": {"": {"agent_crash": 1}}, "reasons": {"agent_crash": reason},
            },
            "slots": ["a"],
        }
    )  # fmt: skip
    assert section is not None
    cell = next(line for line in section.splitlines() if line.startswith("| `agent_crash`"))
    assert "ValueError: the real cause: a missing field" in cell
    assert reason in section
