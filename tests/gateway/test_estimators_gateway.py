"""A 12-module agent of your own, through the gateway, with ``--estimator auto``.

The agent is plain ``openai`` code calling twelve module names (planner,
router, ... reviewer); agentbus varies all twelve. Exhaustively that is 4,096
coalitions a task; ``auto`` picks the per-task sampled estimator (msr) and
runs 2n + 2 = 26 coalitions on each task, all on that task, and reports every
slot's Shapley value with an interval over tasks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

AGENT = """
import re

MODULES = (
    "planner", "router", "retriever", "coder", "tester", "critic",
    "memory", "summariser", "verifier", "formatter", "searcher", "reviewer",
)
_ANSWER = re.compile(r"ANSWER:\\s*(.+)")


async def run(task, ctx):
    answer = None
    for step, module in enumerate(MODULES):
        if module in ctx.off_slots:
            continue
        reply = await ctx.openai.chat.completions.create(
            model=module,
            messages=[
                {"role": "system", "content": f"You are the {module} of an arithmetic agent."},
                {"role": "user", "content": f"Task: {task['question']}\\nSo far: {answer}\\n"
                 f"Step {step}. End with a line 'ANSWER: <value>'."},
            ],
            temperature=0,
        )
        found = _ANSWER.findall(reply.choices[0].message.content or "")
        answer = found[-1].strip() if found else answer
    return {"answer": answer}
"""

SLOTS = ",".join(
    (
        *("planner", "router", "retriever", "coder", "tester", "critic"),
        *("memory", "summariser", "verifier", "formatter", "searcher", "reviewer"),
    )
)


@pytest.mark.slow
def test_twelve_module_gateway_agent_runs_with_estimator_auto(tmp_path: Path) -> None:
    (tmp_path / "twelve.py").write_text(AGENT)
    tasks = (ROOT / "examples" / "plain_openai" / "tasks.jsonl").read_text().splitlines()[:3]
    (tmp_path / "tasks.jsonl").write_text("\n".join(tasks) + "\n")
    run_dir = tmp_path / "run"
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    args = ["--agent", "twelve:run", "--dataset", "tasks.jsonl", "--slots", SLOTS]
    args += ["--estimator", "auto", "--sim-speed", "0", "--no-plots", "--progress", "off"]
    done = subprocess.run(
        [sys.executable, "-m", "agentbus.run", *args, "--run-dir", str(run_dir)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    model = results["models"]["sim:strong"]
    assert model["estimator"] == "msr" and model["not_estimable"] is None
    assert model["episodes"] == 3 * 26  # exhaustive: 3 * 4,096
    shapley = model["shapley"]
    assert set(shapley) == set(SLOTS.split(","))
    for row in shapley.values():
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
    coalitions = [c for c in model["coalitions"] if c]
    assert len(set(coalitions)) > 26  # each task drew its own coalitions
