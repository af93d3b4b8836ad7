"""``python -m agentbus.list envs|modules|agents|presets|backends``: what a run can name.

The command lives in :mod:`agentbus.app.listing`; kept at the top level, like
``agentbus.run``, so the command stays short. The kernel never imports it.
"""

from agentbus.app.listing import main

if __name__ == "__main__":
    raise SystemExit(main())
