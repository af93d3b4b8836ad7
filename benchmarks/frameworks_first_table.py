"""Minutes from a fresh virtualenv to a first attribution table, per framework example.

For each example (smolagents both agent kinds, DSPy plain and typed,
CrewAI), in a scratch virtualenv of its own under a temporary directory
(never the checkout, whose doc checks read every README under it): create
the virtualenv, ``pip install`` agentbus from this checkout with the
framework, then run the example's in-process command on the simulator
(``--limit`` tasks, sim speed 0) with that virtualenv's Python. It prints,
per example, the install time, the run's wall time, whether the run ended
with a table (exit 0, results.json written), the all-test and all-default
v(S) beside the example's exact truth, and the agent failures.

    python benchmarks/frameworks_first_table.py                 # every example
    python benchmarks/frameworks_first_table.py dspy-typed --limit 8

The package index must be reachable. Nothing is left behind.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> (pip requirement, example directory, agent callable, slots)
EXAMPLES: dict[str, tuple[str, str, str, str]] = {
    "smolagents-tools": ("smolagents==1.26.0", "smolagents", "agent:run", "manager,solver"),
    "smolagents-code": ("smolagents==1.26.0", "smolagents", "agent:run_code", "manager,solver"),
    "dspy": ("dspy==3.4.1", "dspy", "program:run", "planner,solver,critic"),
    "dspy-typed": ("dspy==3.4.1", "dspy", "typed:run", "planner,solver,critic"),
    "crewai": ("crewai", "crewai", "crew:run", "solver,reviewer"),
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
    requirement, example, agent, slots = EXAMPLES[name]
    venv = tmp / name
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "-e", str(ROOT), requirement],
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
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    ran = time.perf_counter() - begun
    results = run_dir / "results.json"
    if proc.returncode != 0 or not results.is_file():
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1][:200]
        return f"{name:<17} install {installed:5.0f} s, run {ran:5.0f} s: NO TABLE ({tail})"
    data = json.loads(results.read_text())
    cells = data["models"]["sim:strong"]["coalitions"]
    exact = truth(example)
    every = "+".join(slots.split(","))
    failures = (data.get("agent_failures") or {}).get("failed", 0)
    return (
        f"{name:<17} install {installed:5.0f} s, run {ran:5.0f} s, first table in "
        f"{(installed + ran) / 60:4.1f} min; v(all default) {cells['']['mean']:.3f} "
        f"(truth {exact['']:.3f}), v(all test) {cells[every]['mean']:.3f} "
        f"(truth {exact[every]:.3f}), agent failures {failures}"
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
