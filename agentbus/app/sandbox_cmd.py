"""``python -m agentbus.sandbox --agent-cmd CMD``: what a command agent can see and use.

The same flags as ``agentbus.run`` (``--agent-cmd``, ``--agent-path``,
``--agent-isolation``, ``--agent-memory-mb``, ``--agent-disk-mb``,
``--agent-timeout``, ``--run-dir``) build the same sandbox a run would
(:mod:`agentbus.gateway.sandbox`), and the command prints its allowlist:
every path the agent may read and why, what it may write, its user, its
limits and whether a cgroup counts them here. ``--probe`` also starts the
sandbox once (``/bin/true`` inside it) to show that it starts on this
machine. Nothing of the agent runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from agentbus.app.cli_args import OneLineParser, _csv
from agentbus.core.errors import UserError
from agentbus.gateway.isolation import DISK_MB, MEMORY_MB, Isolation
from agentbus.gateway.runners import PASSED_ENV, command_argv
from agentbus.gateway.sandbox import Sandbox, check, describe


def main(argv: Sequence[str] | None = None) -> int:
    p = OneLineParser(
        prog="python -m agentbus.sandbox",
        description="Print what an --agent-cmd agent can see and use in its sandbox.",
    )
    p.add_argument("--agent-cmd", required=True, metavar="CMD", help="the agent's command")
    p.add_argument("--agent-path", action="append", type=_csv, default=[], help="as for run")
    p.add_argument("--agent-isolation", choices=("sandbox", "none"), default="sandbox")
    p.add_argument("--agent-memory-mb", type=int, default=MEMORY_MB)
    p.add_argument("--agent-disk-mb", type=int, default=DISK_MB)
    p.add_argument("--agent-timeout", type=float, default=300.0, help="CPU seconds of the tree")
    p.add_argument("--run-dir", type=Path, help="the run directory (kept out of sight)")
    p.add_argument("--probe", action="store_true", help="also start the sandbox once")
    ns = p.parse_args(list(argv) if argv is not None else None)
    isolation = Isolation(
        mode=ns.agent_isolation,
        memory_mb=ns.agent_memory_mb,
        cpu_s=ns.agent_timeout,
        disk_mb=ns.agent_disk_mb,
        paths=tuple(Path(x) for group in ns.agent_path for x in group),
        hidden=(ns.run_dir,) if ns.run_dir is not None else (),
    )
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    try:
        if ns.probe:
            check(isolation)
        sandbox = Sandbox(isolation, command_argv(ns.agent_cmd), Path.cwd(), env)
    except UserError as exc:
        print(f"agentbus.sandbox: error: {exc}", file=sys.stderr)
        return 2
    try:
        for line in describe(sandbox):
            print(line)
        if ns.probe:
            print("probe: the sandbox starts here")
    finally:
        sandbox.close()
    return 0


__all__ = ["main"]
