"""The shared checks of an environment's full coalition sweep (one copy, three tests).

The navigation, shopping and ticket evaluation tests each run the whole
16-coalition evaluation of their environment on the embedded defaults and
check the same things: no infrastructure errors, every coalition run on every
task, efficiency (the Shapley values add up to the test model's gain), the
strong model beating the weak one, and a results.json on disk.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

from rich.console import Console

from agentbus.app.config import build_config
from agentbus.app.evaluate import evaluate

SLOTS = {"planning", "reasoning", "action", "reflection"}


async def full_coalition_sweep(env: str, tmp_path: Path, tasks: int = 6) -> dict[str, Any]:
    """Run ``env``'s 16-coalition sweep on ``tasks`` tasks, assert the shared facts.

    Returns the test model's results so a caller can assert more of its own.
    """
    run_dir = tmp_path / env
    cfg = build_config(
        {
            "env": env,
            "tasks": tasks,
            "progress": "off",
            "run_dir": str(run_dir),
            "sim": {"speed": 0},
        }
    )
    report = await evaluate(cfg, Console(file=io.StringIO()))
    assert report.infra_errors == 0
    model: dict[str, Any] = report.results["models"]["sim:strong"]
    assert len(model["coalitions"]) == 2 ** len(SLOTS)
    assert {c["n"] for c in model["coalitions"].values()} == {tasks}
    shap = model["shapley"]
    assert set(shap) == SLOTS
    assert math.isclose(sum(v["value"] for v in shap.values()), model["delta_acc"], abs_tol=1e-9)
    assert model["acc_test"] > model["acc_default"]
    assert (run_dir / "results.json").exists()
    return model
