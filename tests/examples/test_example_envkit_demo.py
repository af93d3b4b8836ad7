"""The worked environment of docs/write-an-environment.md runs end to end and meets its truth.

examples/envkit_demo is a small environment built from nothing with the
environment kit (adapter, tasks, simulated expert) plus its exact truth table
(truth.py, computed from the simulator's profiles). Its plugins are registered
as their pyproject.toml entry points would register them, a whole 16-coalition
evaluation runs on the simulator, and every coalition's mean and every Shapley
value must agree with the truth within the run's own uncertainty.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from agentbus.app.config import build_config
from agentbus.app.evaluate import evaluate
from tests.helpers.example_install import installed

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "envkit_demo"
TASKS = 40
#: how many standard errors an estimate may stray from the truth
Z = 3.5


@pytest.fixture
def truth() -> Iterator[Any]:
    """Register the example's entry points (as pip install -e would) and load truth.py."""
    with installed(EXAMPLE):
        # by file, under a name of its own: other examples have a truth.py too
        spec = importlib.util.spec_from_file_location("tally_truth", EXAMPLE / "truth.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module


def _strays(model: dict[str, Any], v: dict[tuple[str, ...], float]) -> list[str]:
    """The coalitions whose mean lies more than Z binomial standard errors from ``v``."""
    out = []
    for coalition, exact in v.items():
        got = model["coalitions"]["+".join(coalition)]["mean"]
        se = math.sqrt(exact * (1 - exact) / TASKS)
        if abs(got - exact) > Z * se + 1e-9:
            out.append(f"{'+'.join(coalition) or '(none)'}: {got:.3f} vs {exact:.3f}")
    return out


async def test_the_worked_environment_meets_its_truth_table(truth: Any, tmp_path: Path) -> None:
    config = build_config(
        {
            "env": "tally",
            "tasks": TASKS,
            "progress": "off",
            "run_dir": str(tmp_path / "run"),
            "sim": {"speed": 0, "experts": ["tally"]},
        }
    )
    report = await evaluate(config, Console(quiet=True))
    assert report.infra_errors == 0
    model = report.results["models"]["sim:strong"]
    v = truth.values()
    assert len(model["coalitions"]) == len(v) == 16
    assert {c["n"] for c in model["coalitions"].values()} == {TASKS}
    assert _strays(model, v) == []
    phi = truth.shapley(v)
    assert phi["reflection"] == 0.0
    for slot, exact in phi.items():
        est = model["shapley"][slot]
        assert abs(est["value"] - exact) <= Z * est["se"] + 1e-9, (slot, est, exact)
    # the check has teeth: a truth whose actor ignores the thought is rejected
    assert _strays(model, truth.values(reads_thought=False))


def test_the_truth_table_is_a_game_with_the_expected_shape(truth: Any) -> None:
    """Efficiency holds and the strong model helps every slot that runs."""
    v = truth.values()
    phi = truth.shapley(v)
    everyone = tuple(truth.SLOTS)
    assert math.isclose(sum(phi.values()), v[everyone] - v[()], abs_tol=1e-12)
    assert phi["action"] > phi["reasoning"] > phi["planning"] > 0
