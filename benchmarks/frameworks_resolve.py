"""Can agentbus be installed next to each agent framework? (issue 41 item 6)

For each framework, pip resolves agentbus (this checkout, its declared
dependency ranges) together with the framework in a scratch virtualenv,
with ``pip install --dry-run`` (nothing is installed), and the script prints
whether the two fit in one environment and, when they do, the versions pip
picked for the packages they share (the OpenAI and Anthropic SDKs, pydantic,
httpx). CI's time is too short to resolve seven frameworks, so the last run's
output is quoted in docs/your-agent.md instead.

    python benchmarks/frameworks_resolve.py                # all seven
    python benchmarks/frameworks_resolve.py crewai dspy    # some

The scratch virtualenv is made in a temporary folder (never the project's
.venv, whose versions other tests depend on) and removed at the end. It needs
the package index; each resolution takes from seconds to a few minutes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = (
    "langgraph",
    "openai-agents",
    "pydantic-ai",
    "smolagents",
    "autogen-agentchat",
    "crewai",
    "dspy",
)
SHOWN = ("openai", "anthropic", "pydantic", "httpx", "httpx2", "litellm")


def resolve(
    python: Path, framework: str, timeout_s: float, project: Path = ROOT
) -> tuple[bool, str]:
    """(fits, what pip said) for agentbus + ``framework`` resolved together."""
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        cmd = [
            str(python),
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--ignore-installed",
            "--report",
            report.name,
            str(project),
            framework,
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False, f"pip did not finish within {timeout_s:.0f} s"
        if proc.returncode != 0:
            lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("ERROR")]
            return False, " | ".join(lines[-2:]) or proc.stderr.strip()[-300:]
        data = json.loads(Path(report.name).read_text() or "{}")
    picked = {
        item["metadata"]["name"].lower(): item["metadata"]["version"]
        for item in data.get("install", [])
    }
    parts = [f"{framework} {picked.get(framework, '?')}"]
    parts += [f"{name} {picked[name]}" for name in SHOWN if name in picked]
    return True, ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("frameworks", nargs="*", default=list(FRAMEWORKS))
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per resolution")
    p.add_argument("--project", type=Path, default=ROOT, help="agentbus checkout to resolve")
    ns = p.parse_args(argv)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="agentbus-resolve-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"],
            check=True,
            capture_output=True,
        )
        version = subprocess.run(
            [str(python), "-m", "pip", "--version"], capture_output=True, text=True
        ).stdout.split()[1]
        print(f"agentbus ({ns.project}) with each framework, pip {version} --dry-run:")
        for framework in ns.frameworks:
            started = time.perf_counter()
            fits, said = resolve(python, framework, ns.timeout, ns.project)
            failed += not fits
            took = time.perf_counter() - started
            print(f"{'fits ' if fits else 'FAILS'} {framework:<18} {took:6.1f} s  {said}")
            sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
