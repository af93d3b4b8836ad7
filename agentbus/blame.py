"""``python -m agentbus.blame RUN_DIR``: the decisive call of each failure (lives in
:mod:`agentbus.app.blame_cmd`).

Kept at the top level so the command stays short; the kernel never imports this.
"""

from agentbus.app.blame_cmd import main

if __name__ == "__main__":
    raise SystemExit(main())
