"""The ``agentbus`` console script: ``agentbus run|report|tail|sim ...``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from agentbus.pipes import pipe_safe

USAGE = "usage: agentbus {run,report,tail,sim} [ARGS...]  (each takes --help)"


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "run":
        from agentbus.app.run import main as run_main

        return run_main(rest)
    if command == "report":
        from agentbus.app.report import main as report_main

        return report_main(rest)
    if command == "tail":
        from agentbus.runs.tail import main as tail_main

        return tail_main(rest)
    if command == "sim":
        from agentbus.sim.serve import main as sim_main

        return sim_main(rest)
    print(f"agentbus: error: unknown command {command!r}; {USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
