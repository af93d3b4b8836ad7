"""``python -m agentbus.plan``: power planning from a pilot (lives in :mod:`agentbus.app.planning`).

Kept at the top level so the command stays short; the kernel never imports this.
"""

from agentbus.app.planning import main

if __name__ == "__main__":
    raise SystemExit(main())
