"""``python -m agentbus.discover``: list the modules your agent uses.

The command lives in :mod:`agentbus.app.discover`.

Kept at the top level, like ``agentbus.run``, so the command stays short; the
kernel never imports it.
"""

from agentbus.app.discover import main

if __name__ == "__main__":
    raise SystemExit(main())
