"""examples/smolagents (manager + managed solver agent) as its README runs it, against its truth.

The README's in-process command on the first 16 of the example's tasks (64
episodes, every coalition of manager/solver; 24 tasks before issue 50 added
the CodeAgent run below; smolagents' own bookkeeping is most of the CPU),
through the real path: smolagents -> gateway -> router -> simulator
(generic gateway model: final_answer called last with the answer, the
managed agent called before it, the calculator once, a wrong manager
repeating its worker's report). Every coalition's
success rate is within 3.5 binomial standard errors of truth.py's exact
v(S), every Shapley value within 3.5 reported standard errors of the exact
phi, and a wrong truth (a manager that ignores its worker, as the simulator
did before issue 41) is caught by the same check.

Issue 50: the same app with ``CodeAgent``s (agent.py's run_code: the model acts by
writing code; before, the simulator never wrote a code block and every
answer failed smolagents' parser) on the same 16 tasks against the same
truth, and a ``ToolCallingAgent`` whose tool always raises: it is called
once, then the agent answers (before: called again until "Reached max
steps", 5 calls an episode).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentbus.sim.gateway_model import probability
from agentbus.sim.profiles import BUILTIN
from tests.helpers.agent_probes import probe_run
from tests.helpers.cli_run import ended_episodes
from tests.helpers.framework_examples import readme_command, run, truth_module

pytest.importorskip("smolagents")
from smolagents import OpenAIServerModel, ToolCallingAgent, tool

SLOTS = ("manager", "solver")
TASKS = 16


def _z(coalitions: dict[str, dict], exact: dict[tuple[str, ...], float]) -> dict[str, float]:
    out = {}
    for coalition, truth in exact.items():
        cell = coalitions["+".join(coalition)]
        se = max((truth * (1 - truth) / cell["tasks"]) ** 0.5, 1e-9)
        out["+".join(coalition)] = (cell["mean"] - truth) / se
    return out


def _ignores_worker(coalition: tuple[str, ...]) -> float:
    """A wrong truth: the manager's own answer whenever it is on (no relay of the report)."""
    model = "strong" if "manager" in coalition else "weak"
    return probability(BUILTIN.get(model), "manager")


def _check(results: dict, run_dir: Path) -> None:
    truth = truth_module("smolagents")
    episodes = ended_episodes(run_dir)
    assert len(episodes) == TASKS * 4
    for e in episodes:
        assert "agent_error" not in e["outcome"]["details"], e["outcome"]["details"]
        calls = e["outcome"]["details"]["gateway"]["modules"]
        # one delegation + one final answer; calculator + final answer (not to max_steps)
        assert calls["manager"]["calls"] == 2 and calls["solver"]["calls"] == 2, calls
    model = results["models"]["sim:strong"]
    v = truth.values()
    z = _z(model["coalitions"], v)
    assert max(abs(x) for x in z.values()) < 3.5, z
    ignores_worker = {c: _ignores_worker(c) for c in v}
    off = _z(model["coalitions"], ignores_worker)
    assert max(abs(x) for x in off.values()) > 3.5, off
    phi = truth.shapley(v)
    for slot in SLOTS:
        est = model["shapley"][slot]
        assert abs(est["value"] - phi[slot]) < 3.5 * est["se"], (slot, est, phi[slot])


def test_readme_run_matches_the_known_truth(tmp_path: Path) -> None:
    argv = [*readme_command("smolagents", "--agent"), "--limit", str(TASKS)]
    _check(run(argv, tmp_path / "run"), tmp_path / "run")


def test_code_agents_match_the_same_truth(tmp_path: Path) -> None:
    argv = [*readme_command("smolagents", "--agent"), "--limit", str(TASKS)]
    argv[argv.index("examples.smolagents.agent:run")] = "examples.smolagents.agent:run_code"
    _check(run(argv, tmp_path / "run"), tmp_path / "run")


@tool
def lookup(expression: str) -> str:
    """Looks the value of an expression up in a service that is down.

    Args:
        expression: the expression to look up.
    """
    raise RuntimeError("the lookup service is down")


def _raising(task: dict, base_url: str, api_key: str) -> dict:
    model = OpenAIServerModel(model_id="solver", api_base=base_url, api_key=api_key)
    agent = ToolCallingAgent(tools=[lookup], model=model, max_steps=4, verbosity_level=0)
    return {"answer": str(agent.run(task["question"]))}


async def raising(task: dict, ctx: Any) -> dict:
    """A ToolCallingAgent whose only tool raises every time."""
    return await asyncio.to_thread(_raising, task, ctx.base_url, ctx.api_key)


def test_a_tool_that_raises_is_called_once_then_the_agent_answers(tmp_path: Path) -> None:
    run_dir, _ = probe_run(
        tmp_path,
        ["ok-1", "ok-2"],
        agent="tests.examples.test_example_smolagents:raising",
        slots=["solver"],
    )
    for e in ended_episodes(run_dir):
        details = e["outcome"]["details"]
        assert details["gateway"]["modules"]["solver"]["calls"] == 2, details
        assert "Reached max steps" not in str(details["result"]["answer"]), details
