"""``python -m agentbus.report RUN_DIR``: rebuild results (lives in :mod:`agentbus.app.report`).

Kept at the top level so the command users type stays short and stable; the
kernel never imports this.
"""

from agentbus.app.report import main

if __name__ == "__main__":
    raise SystemExit(main())
