"""``python -m agentbus.truth``: the simulator's known truth (lives in :mod:`agentbus.app.truth`).

Kept at the top level so the command users type stays short and stable while
the composition with ``attribution`` lives in the application layer; the
kernel never imports this.
"""

from agentbus.app.truth import main

if __name__ == "__main__":
    raise SystemExit(main())
