"""``python -m agentbus.sandbox --agent-cmd CMD``: what your agent can see in its sandbox.

The command lives in :mod:`agentbus.app.sandbox_cmd`; kept at the top level,
like ``agentbus.run``, so the command stays short. The kernel never imports it.
"""

from agentbus.app.sandbox_cmd import main

if __name__ == "__main__":
    raise SystemExit(main())
