"""The ``agentbus`` console script: every command of the project under one name.

``agentbus COMMAND ARGS...`` runs the same ``main`` as ``python -m
agentbus.COMMAND ARGS...`` (the two-line entry files at the package root,
kept so those commands keep working): one table, :data:`COMMANDS`, says
where each command's ``main`` lives, and ``tests/app/test_cli_commands.py``
checks that every entry file has its row. A command is imported only when
it is called, so ``agentbus --help`` stays fast.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import cast

from agentbus.runs.pipes import pipe_safe

#: command -> (module whose ``main`` runs it, what it does)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("agentbus.app.run", "run an evaluation (or resume one) and attribute it"),
    "report": ("agentbus.app.report", "rebuild a run's results and plots from its log"),
    "tail": ("agentbus.runs.tail", "follow a run's events as they are written"),
    "view": ("agentbus.runs.viewer", "open a finished run's dashboard"),
    "list": ("agentbus.app.listing", "list environments, modules, backends and experts"),
    "plan": ("agentbus.app.planning", "how many episodes and calls a run will take"),
    "export": ("agentbus.app.export", "a run's episodes as a table (CSV, Parquet, JSON lines)"),
    "truth": ("agentbus.app.truth", "the simulator's exact values, and a run checked against them"),
    "truth-cost": ("agentbus.app.truth_cost", "the simulator's exact token and dollar costs"),
    "blame": ("agentbus.app.blame_cmd", "which model call decided a failed episode (replay)"),
    "discover": ("agentbus.app.discover", "find the modules of your own agent through the gateway"),
    "sandbox": ("agentbus.app.sandbox_cmd", "what your agent can see in its sandbox"),
    "sim": ("agentbus.sim.serve", "serve the simulated models over HTTP"),
    "serve-vllm": ("agentbus.app.serve_vllm", "size and launch vLLM servers for a run"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()]
    return (
        "usage: agentbus COMMAND [ARGS...]  (agentbus COMMAND --help for its flags)\n\n"
        "commands:\n" + "\n".join(lines)
    )


def command_main(name: str) -> Callable[[Sequence[str] | None], int]:
    """The ``main`` of command ``name`` (imported now)."""
    module = importlib.import_module(COMMANDS[name][0])
    return cast(Callable[[Sequence[str] | None], int], module.main)


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        known = ", ".join(COMMANDS)
        print(f"agentbus: error: unknown command {name!r}; commands: {known}", file=sys.stderr)
        return 2
    return command_main(name)(rest)


if __name__ == "__main__":
    raise SystemExit(main())
