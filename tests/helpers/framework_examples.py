"""Helpers for the framework examples' tests (tests/examples/test_example_*.py): README commands, truth.

What the tests check (issue 31 point 6), for each of the two framework examples:

* ``examples/openai_agents`` (OpenAI Agents SDK, handoffs Planner -> Solver ->
  Critic, then a vote) and ``examples/langgraph`` (LangGraph, a review loop
  with a conditional edge): the README's in-process ``python -m agentbus.run
  --agent ...`` command runs in a subprocess on the example's 80 tasks (640
  episodes, every coalition of planner/solver/critic, ~30 s of CPU), through
  the real path: framework -> gateway -> router -> simulator (generic
  gateway model). Every coalition's success rate in ``results.json`` is
  within 3.5 binomial standard errors of the exact v(S) of the example's
  ``truth.py`` (from the agent's own logic and the profiles' skills), and
  every Shapley value within 3.5 of its reported standard errors of the
  exact phi. A wrong truth (a plausible misreading of the agent's logic)
  fails the same check, so the check can tell.
* the README's ``--agent-cmd`` command (one process per episode, the SDK
  configured from ``OPENAI_BASE_URL``/``OPENAI_API_KEY``) on one task, with the
  critic switched off on the default side (``--vary critic=off:on``): every
  episode gives an answer, the gateway refused nothing (the agent read
  ``AGENTBUS_OFF_SLOTS`` and left the critic out) and the critic was called
  only where it was on.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import orjson

from agentbus.sim import gateway_truth
from agentbus.sim.gateway_model import probability
from agentbus.sim.profiles import BUILTIN
from tests.helpers.cli_run import command, ended_episodes, succeeded, venv_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SLOTS = ("planner", "solver", "critic")
SHORT = ["--sim-speed", "0", "--progress", "off", "--no-plots"]


def truth_module(name: str) -> ModuleType:
    """examples/NAME/truth.py, loaded from its file."""
    spec = importlib.util.spec_from_file_location(f"{name}_truth", EXAMPLES / name / "truth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def readme_command(name: str, flag: str) -> list[str]:
    """The README's ``python -m agentbus.run`` command that uses ``flag`` (as argv)."""
    text = (EXAMPLES / name / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    lines = [ln.strip() for b in blocks for ln in b.splitlines()]
    found = [ln for ln in lines if ln.startswith("python -m agentbus.run") and f"{flag} " in ln]
    assert len(found) == 1, (name, flag, found)
    argv = shlex.split(found[0])
    assert argv[0] == "python"
    return [sys.executable, *argv[1:]]


def run(argv: list[str], run_dir: Path) -> dict:
    """``argv`` from the repository root with the shortening flags; results.json."""
    argv = [*argv, *SHORT, "--run-dir", str(run_dir)]
    # venv_env: the "python" of an --agent-cmd is this interpreter
    succeeded(command(argv, cwd=ROOT, env=venv_env(), timeout=600))
    return orjson.loads((run_dir / "results.json").read_bytes())


Success = Callable[[float | None, float, float | None], float]
Logic = Callable[[Callable[[str], str]], str | None]


def values(success: Success) -> dict[str, float]:
    """v(S) by coalition key of results.json ('' for none, 'planner+critic', ...)."""
    out = {}
    for mask in range(1 << len(SLOTS)):
        coalition = [s for i, s in enumerate(SLOTS) if mask >> i & 1]
        p = {m: probability(BUILTIN.get("strong" if m in coalition else "weak"), m) for m in SLOTS}
        out["+".join(coalition)] = success(p["planner"], p["solver"], p["critic"])
    return out


def z_scores(coalitions: dict[str, dict], exact: dict[str, float]) -> dict[str, float]:
    """(success rate - exact v) / binomial se, per coalition of results.json."""
    out = {}
    for key, truth in exact.items():
        cell = coalitions[key]
        se = max((truth * (1 - truth) / cell["tasks"]) ** 0.5, 1e-9)
        out[key] = (cell["mean"] - truth) / se
    return out


def check_truth(name: str, wrong: Success, run_dir: Path) -> None:
    """The README's in-process command on the example's 80 tasks against truth.py."""
    truth = truth_module(name)
    results = run(readme_command(name, "--agent"), run_dir)
    episodes = ended_episodes(run_dir)
    assert len(episodes) == 80 * 8
    for e in episodes:
        assert "agent_error" not in e["outcome"]["details"], e["outcome"]["details"]
    gateway = results["gateway"]
    assert set(gateway["calls"]) == set(SLOTS) and gateway["agent_failures"] == 0, gateway
    assert not gateway.get("refused") and not gateway.get("unmapped"), gateway
    model = results["models"]["sim:strong"]
    z = z_scores(model["coalitions"], values(truth.success))
    print(f"{name}: z per coalition {z}")
    assert max(abs(x) for x in z.values()) < 3.5, z
    off = z_scores(model["coalitions"], values(wrong))
    assert max(abs(x) for x in off.values()) > 3.5, off  # a wrong truth is caught
    phi = truth.shapley(truth.values())
    for slot in SLOTS:
        est = model["shapley"][slot]
        assert abs(est["value"] - phi[slot]) < 3.5 * est["se"], (slot, est, phi[slot])


def check_command_agent(name: str, run_dir: Path) -> None:
    """The README's --agent-cmd command, one task, the critic off on the default side."""
    argv = [*readme_command(name, "--agent-cmd"), "--limit", "1", "--vary", "critic=off:on"]
    results = run(argv, run_dir)
    episodes = ended_episodes(run_dir)
    assert len(episodes) == 8
    for e in episodes:
        outcome = e["outcome"]
        assert "agent_error" not in outcome["details"], outcome["details"]
        modules = outcome["details"]["gateway"]["modules"]
        assert modules["planner"]["calls"] >= 1 and modules["solver"]["calls"] >= 1
        critic_on = "critic" in e["coalition"]
        critic_calls = modules.get("critic", {}).get("calls", 0)
        assert (critic_calls > 0) == critic_on, (e["coalition"], modules)
    assert not results["gateway"].get("refused"), results["gateway"]


def check_first_tasks(
    name: str, tasks: int, wrong: Logic, run_dir: Path, calls: dict[str, int]
) -> None:
    """The README's in-process command on the first ``tasks`` tasks against truth.py.

    No episode fails, each module in ``calls`` is called that many times in
    every episode, every coalition is within 3.5 binomial standard errors of
    the exact v(S), and ``wrong`` (a plausible misreading of the app, as an
    ``ask`` logic) fails the same check, so it can tell.
    """
    truth = truth_module(name)
    results = run([*readme_command(name, "--agent"), "--limit", str(tasks)], run_dir)
    episodes = ended_episodes(run_dir)
    assert len(episodes) == tasks * 2 ** len(truth.SLOTS)
    for e in episodes:
        details = e["outcome"]["details"]
        assert "agent_error" not in details, details
        made = {m: details["gateway"]["modules"][m]["calls"] for m in calls}
        assert made == calls, (e["coalition"], made)
    gateway = results["gateway"]
    assert set(gateway["calls"]) == set(truth.SLOTS) and gateway["agent_failures"] == 0, gateway
    coalitions = results["models"]["sim:strong"]["coalitions"]
    exact = {"+".join(c): v for c, v in truth.values().items()}
    z = z_scores(coalitions, exact)
    assert max(abs(x) for x in z.values()) < 3.5, z
    misread = {"+".join(c): v for c, v in gateway_truth.values(wrong, truth.SLOTS).items()}
    off = z_scores(coalitions, misread)
    assert max(abs(x) for x in off.values()) > 3.5, off  # a wrong truth is caught
