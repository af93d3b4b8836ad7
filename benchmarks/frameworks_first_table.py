"""Minutes from a fresh virtualenv to a first attribution table, per framework example.

For each example (the plain OpenAI SDK, LangGraph, the OpenAI Agents SDK,
pydantic-ai, smolagents both agent kinds, AutoGen AgentChat, CrewAI, DSPy
plain and typed), in a scratch virtualenv of its own under a temporary
directory (never the checkout, whose doc checks read every README under it):
create the virtualenv, ``pip install`` agentbus from this checkout with the
framework, then run the example's in-process command on the simulator
(``--limit`` tasks, sim speed 0) with that virtualenv's Python. It prints,
per example, the install time, the run's wall time and CPU time, whether
the run ended with a table (exit 0, results.json written), the all-test and
all-default v(S) beside the example's exact truth, the agent failures, and
the machine's load average (1 minute) before the install and after the run:
on a shared machine the wall times grow with it.

    python benchmarks/frameworks_first_table.py                 # every example
    python benchmarks/frameworks_first_table.py pydantic-ai autogen --limit 8

The package index must be reachable. Nothing is left behind.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PSC = "planner,solver,critic"
#: name -> (pip requirements, example directory, agent callable, slots); the requirements
#: are the ones each example's README installs
EXAMPLES: dict[str, tuple[tuple[str, ...], str, str, str]] = {
    "plain-openai": ((), "plain_openai", "agent:run", PSC),
    "langgraph": (("langgraph==1.2.24", "langchain-openai==1.7.4"), "langgraph", "graph:run", PSC),
    "openai-agents": (("openai-agents==0.24.0",), "openai_agents", "agent:run", PSC),
    "pydantic-ai": (("pydantic-ai-slim[openai]==2.78.0",), "pydantic_ai", "agent:run", PSC),
    "smolagents-tools": (("smolagents==1.26.0",), "smolagents", "agent:run", "manager,solver"),
    "smolagents-code": (("smolagents==1.26.0",), "smolagents", "agent:run_code", "manager,solver"),
    "autogen": (
        ("autogen-agentchat==0.7.5", "autogen-ext[openai]==0.7.5"),
        "autogen",
        "team:run",
        PSC,
    ),
    "crewai": (("crewai",), "crewai", "crew:run", "solver,reviewer"),
    "dspy": (("dspy==3.4.1",), "dspy", "program:run", PSC),
    "dspy-typed": (("dspy==3.4.1",), "dspy", "typed:run", PSC),
}


def truth(example: str) -> dict[str, float]:
    """The example's exact v(S) by coalition key ('' for all default)."""
    path = ROOT / "examples" / example / "truth.py"
    spec = importlib.util.spec_from_file_location(f"{example}_truth", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"+".join(k): v for k, v in module.values().items()}


def measure(name: str, limit: int, tmp: Path) -> str:
    """One example from a fresh virtualenv to its first table: the result line."""
    requirements, example, agent, slots = EXAMPLES[name]
    venv = tmp / name
    load = os.getloadavg()[0]
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "-e", str(ROOT), *requirements],
        capture_output=True,
        text=True,
    )
    installed = time.perf_counter() - started
    if install.returncode != 0:
        return f"{name:<17} install FAILED after {installed:.0f} s: {install.stderr.strip()[-200:]}"
    run_dir = tmp / f"{name}-run"
    argv = [
        str(python), "-m", "agentbus.run", "--agent", f"examples.{example}.{agent}",
        "--dataset", f"examples/{example}/tasks.jsonl", "--slots", slots,
        "--limit", str(limit), "--sim-speed", "0", "--progress", "off", "--no-plots",
        "--run-dir", str(run_dir),
    ]  # fmt: skip
    begun = time.perf_counter()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    ran = time.perf_counter() - begun
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    loads = f"load {load:.1f} -> {os.getloadavg()[0]:.1f}"
    results = run_dir / "results.json"
    if proc.returncode != 0 or not results.is_file():
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1][:200]
        return (
            f"{name:<17} install {installed:5.0f} s, run {ran:5.0f} s: NO TABLE ({tail}); {loads}"
        )
    data = json.loads(results.read_text())
    cells = data["models"]["sim:strong"]["coalitions"]
    exact = truth(example)
    every = "+".join(slots.split(","))
    failures = (data.get("agent_failures") or {}).get("failed", 0)
    return (
        f"{name:<17} install {installed:5.0f} s, run {ran:5.0f} s ({cpu:.0f} s CPU), first "
        f"table in {(installed + ran) / 60:4.1f} min; v(all default) {cells['']['mean']:.3f} "
        f"(truth {exact['']:.3f}), v(all test) {cells[every]['mean']:.3f} "
        f"(truth {exact[every]:.3f}), agent failures {failures}; {loads}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("examples", nargs="*", default=list(EXAMPLES), choices=list(EXAMPLES))
    p.add_argument("--limit", type=int, default=16, help="tasks per run (every coalition)")
    ns = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agentbus-first-table-") as tmp:
        for name in ns.examples:
            print(measure(name, ns.limit, Path(tmp)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
