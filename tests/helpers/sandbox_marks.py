"""The skip mark for tests that need the agent sandbox (bubblewrap) to run here.

``check(Isolation())`` is what ``agentbus.run`` itself asks before it starts a
sandboxed agent, so a test is skipped exactly where a user's run would stop
with the one-line "install bubblewrap" error, with the reason in the report.
"""

from __future__ import annotations

import pytest

from agentbus.gateway.isolation import Isolation
from agentbus.gateway.sandbox import check


def sandbox_works() -> bool:
    """Whether a sandboxed agent can start on this machine."""
    try:
        check(Isolation())
    except Exception:
        return False
    return True


needs_bwrap = pytest.mark.skipif(not sandbox_works(), reason="bubblewrap cannot run here")
