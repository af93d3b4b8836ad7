"""``python -m agentbus.run``: the evaluation command (lives in :mod:`agentbus.app.run`).

Kept at the top level so the command users type stays short and stable while
the application layer lives in its own wing; the kernel never imports this.
"""

from agentbus.app.run import main

if __name__ == "__main__":
    raise SystemExit(main())
