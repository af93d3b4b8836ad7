"""``python -m agentbus.tail URL``: follow a live run (lives in :mod:`agentbus.runs.tail`).

Kept at the top level so the command users type stays short and stable; the
kernel never imports this.
"""

from agentbus.runs.tail import main

if __name__ == "__main__":
    raise SystemExit(main())
