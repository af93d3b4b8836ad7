"""The machine's load never fails a healthy agent (issue 41 item 2).

Two ways a healthy agent ran past ``--agent-timeout`` before: its model
calls queued behind the run's other episodes (the limit counted the wait,
though the episode timeout did not), and sixteen command agents shared two
cores (each got an eighth of a core). Here the waits are left out of the
agent's limit, and command agents run at most as many at once as the
process has CPUs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentbus.app.config import RunConfig, build_config
from agentbus.gateway.machine import machine_cpus
from tests.helpers.agent_probes import probe_run


def _ended(run_dir: Path) -> list[dict]:
    lines = (run_dir / "events.jsonl").read_bytes().splitlines()
    return [e for e in map(orjson.loads, lines) if e.get("type") == "episode.ended"]


def test_time_waiting_for_a_model_slot_is_not_the_agents(tmp_path: Path) -> None:
    # One model slot per model, no shared calls: 16 episodes of 2 calls queue for
    # up to about 3 s, past the agent's 2 s limit, while each agent's own time (its
    # two calls, about 0.35 s each at --sim-speed 8) stays near 1 s. The test fails
    # when the limit counts the queue (checked, load ~9). Mostly sleep: about 3 s of
    # CPU, 6 s wall on an idle machine.
    run_dir, _ = probe_run(
        tmp_path,
        ["ok-1", "ok-2", "ok-3", "ok-4"],
        keep_going=True,
        agent_timeout_s=2.0,
        llm={"limits": {"max_concurrency": 1}, "cache": "off"},
        sim={"speed": 8, "base_latency_s": 1.0, "transport": "inprocess"},
    )
    episodes = _ended(run_dir)
    assert len(episodes) == 16
    timed_out = [e["outcome"]["reason"] for e in episodes if e["outcome"].get("error_kind")]
    assert timed_out == []
    waited = [e["outcome"]["details"].get("model_queue_s", 0) for e in episodes]
    assert max(waited) > 2.0  # the run really queued past the limit


def test_command_agents_run_as_many_at_once_as_there_are_cpus() -> None:
    config = RunConfig()
    assert config.agent_processes == machine_cpus() == len(os.sched_getaffinity(0))
    given = build_config({"agent_processes": 5})
    assert given.agent_processes == 5


BURN = """
import json, sys, time
task = json.loads(sys.stdin.readline())
began = time.time()
end = time.process_time() + {cpu}
while time.process_time() < end:
    pass
with open(task["log"], "a") as fh:
    fh.write(f"{{began}} {{time.time()}}\\n")
print(json.dumps({{"answer": "x"}}))
"""


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def test_cpu_bound_command_agents_do_not_fail_on_a_shared_machine(
    tmp_path: Path, processes: int | None = None
) -> None:
    # The case: 16 agents each needing 2 s of CPU on 2 cores with a 20 s
    # limit; all 16 ran at once (the old default of 16 processes), each got an
    # eighth of a core, and 17 of 49 failures were healthy agents killed by the
    # limit. Here 16 agents of 0.1 s of CPU: what matters is that no more of them
    # run at once than the process has CPUs (each then has a core to itself), and
    # that none fails; the limit is generous (5 s) so a loaded machine cannot fail
    # the test, and the overlap is measured, not inferred from time-outs (the old
    # default ran all 16 at once: checked with processes=16). The command agent
    # needs no model, so its slots are never called: --keep-going lets it finish.
    agent = tmp_path / "burn.py"
    agent.write_text(BURN.format(cpu=0.1))
    log = tmp_path / "spans.txt"
    rows = [{"id": f"t{i}", "question": "-", "answer": "x", "log": str(log)} for i in range(4)]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run_dir, _ = probe_run(
        tmp_path,
        [],
        agent="praf",
        agent_cmd=f"{sys.executable} {agent}",
        agent_isolation="none",
        agent_timeout_s=5.0,
        keep_going=True,
        dataset=str(tmp_path / "tasks.jsonl"),
        **({} if processes is None else {"agent_processes": processes}),
    )
    episodes = _ended(run_dir)
    assert len(episodes) == 16
    kinds = [e["outcome"].get("error_kind") for e in episodes]
    assert kinds == [None] * 16, [e["outcome"]["reason"] for e in episodes]
    spans = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    assert len(spans) == 16
    assert _most_at_once(spans) <= machine_cpus()  # type: ignore[arg-type]


def test_a_time_out_on_a_saturated_machine_says_so_with_the_remedy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentbus.gateway import actors
    from attribution.tables import agent_failure_line

    monkeypatch.setattr(actors, "saturation", lambda: "load 9.5 on 2 CPUs")
    note = actors.timeout_note("agent ran past its time limit of 20s", 3.4)
    assert note["saturated"] == "load 9.5 on 2 CPUs"
    assert note["error"] == (
        "agent ran past its time limit of 20s (not counting 3s its calls waited for a model "
        "slot); the machine was saturated (load 9.5 on 2 CPUs): run fewer agents at once "
        "(--agent-processes) or raise --agent-timeout"
    )
    monkeypatch.setattr(actors, "saturation", lambda: None)
    assert "saturated" not in actors.timeout_note("agent ran past its time limit of 20s", 0)
    failures = {"failed": 2, "episodes": 8, "by_kind": {"agent_timeout": 2}, "saturated": 2,
                "load": "load 9.5 on 2 CPUs"}  # fmt: skip
    line = agent_failure_line({"agent_failures": failures}) or ""
    assert "2 of the time-outs came while the machine was saturated (load 9.5 on 2 CPUs)" in line


class _QueuedLLM:
    """Waits ``queue_s`` for a model slot (reported as the LLM layer does), then answers."""

    def __init__(self, queue_s: float) -> None:
        self.queue_s = queue_s

    async def complete(self, messages: object, params: object = None) -> str:
        from agentbus.llm.queueing import waiting_for_slot

        with waiting_for_slot():
            await anyio.sleep(self.queue_s)
        await anyio.sleep(0.05)
        return "done"


def test_the_agents_deadline_moves_out_by_its_gateway_calls_waits() -> None:
    # the mechanism of the first test without a run: the gateway's call reports
    # its wait to the agent's clock (and the episode's), the limit moves out
    from agentbus.gateway.deadline import agent_clock, agent_deadline
    from agentbus.gateway.session import ClockedLLM
    from agentbus.llm.queueing import FanClock, QueueClock

    async def call(through_clock: bool) -> float:
        waits, episode = QueueClock(), QueueClock()
        llm: Any = _QueuedLLM(0.6)
        if through_clock:
            llm = ClockedLLM(llm, FanClock(waits, episode))
        with agent_clock(waits), agent_deadline(0.3):
            await llm.complete([])
        return episode.waited_s

    assert anyio.run(call, True) >= 0.6  # the episode's clock saw the wait too
    with pytest.raises(TimeoutError):  # a wait nobody reports counts against the limit
        anyio.run(call, False)
