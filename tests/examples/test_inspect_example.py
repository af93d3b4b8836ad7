"""examples/inspect: the README's command reaches a table whose every interval holds the truth.

The README's ``python -m agentbus.run --inspect ...`` runs in a subprocess on
the example's 24 samples (192 episodes, every coalition of planner, solver
and critic) through the real path: Inspect's solver -> its models (Inspect's
``openai`` provider) -> module gateway -> router -> simulator, and Inspect's
``match`` scorer decides each sample. The run is deterministic (temperature
0, answers drawn from the prompt), so the check is too: each role's 95%
interval holds its exact Shapley value (examples/inspect/truth.py), each
coalition's success rate is within 3.5 binomial standard errors of its
exact v(S), and every call went to a declared role (none to the main model).
Skipped where inspect-ai (``agentbus[inspect]``) is not installed; CI
installs it with the dev extra.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'agentbus[inspect]'")

from tests.helpers.cli_run import ended_episodes
from tests.helpers.framework_examples import EXAMPLES, run, truth_module, values, z_scores

pytestmark = pytest.mark.slow
SAMPLES = 24


def readme_run() -> list[str]:
    """The README's first ``python -m agentbus.run`` command (the plain run), as argv."""
    text = (EXAMPLES / "inspect" / "README.md").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("python -m agentbus.run"))
    assert "--inspect-log" not in line
    return [sys.executable, *shlex.split(line)[1:]]


def test_readme_run_covers_the_known_truth(tmp_path: Path) -> None:
    truth = truth_module("inspect")
    results = run(readme_run(), tmp_path / "run")
    episodes = ended_episodes(tmp_path / "run")
    assert len(episodes) == SAMPLES * 8
    for e in episodes:
        details = e["outcome"]["details"]
        assert "agent_error" not in details, details
        assert (
            details["scored_by"] == "scorer" and "match" in details["result"]["inspect"]["scores"]
        )
    gateway = results["gateway"]
    assert set(gateway["calls"]) == set(truth.SLOTS) and gateway["agent_failures"] == 0, gateway
    model = results["models"]["sim:strong"]
    z = z_scores(model["coalitions"], values(truth.success))
    assert max(abs(x) for x in z.values()) < 3.5, z
    phi = truth.shapley(truth.values())
    for slot in truth.SLOTS:
        est = model["shapley"][slot]
        assert est["ci_low"] <= phi[slot] <= est["ci_high"], (slot, est, phi[slot])
