"""``python -m agentbus.sim`` is ``python -m agentbus.sim.serve``."""

import sys

from agentbus.sim.serve import main

sys.exit(main())
