"""``python -m agentbus.truth_cost``: the cost truth (see :mod:`agentbus.app.truth_cost`).

Kept at the top level beside ``agentbus.truth`` so the command stays short;
the kernel never imports this.
"""

from agentbus.app.truth_cost import main

if __name__ == "__main__":
    raise SystemExit(main())
