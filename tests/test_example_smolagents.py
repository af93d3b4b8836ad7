"""examples/smolagents (manager + managed solver agent) as its README runs it, against its truth.

The README's in-process command on the first 24 of the example's tasks (96
episodes: every coalition of manager/solver, ~11 s of CPU: smolagents' own
bookkeeping is most of it), through the real path: smolagents ->
gateway -> router -> simulator (generic gateway model: final_answer called
last with the answer, the managed agent called before it, the calculator
once, a wrong manager repeating its worker's report). Every coalition's
success rate is within 3.5 binomial standard errors of truth.py's exact
v(S), every Shapley value within 3.5 reported standard errors of the exact
phi, and a wrong truth (a manager that ignores its worker, as the simulator
did before issue 41) is caught by the same check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_examples import readme_command, run, truth_module

from agentbus.sim.gateway_model import probability
from agentbus.sim.profiles import BUILTIN
from tests.cli_run import ended_episodes

pytest.importorskip("smolagents")

SLOTS = ("manager", "solver")
TASKS = 24


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


def test_readme_run_matches_the_known_truth(tmp_path: Path) -> None:
    truth = truth_module("smolagents")
    argv = [*readme_command("smolagents", "--agent"), "--limit", str(TASKS)]
    results = run(argv, tmp_path / "run")
    episodes = ended_episodes(tmp_path / "run")
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
