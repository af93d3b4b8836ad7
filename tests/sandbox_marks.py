"""The skip mark for tests that need the agent sandbox (bubblewrap) to run here.

``Isolation().check()`` is what ``agentbus.run`` itself asks before it starts a
sandboxed agent, so a test is skipped exactly where a user's run would stop
with the one-line "install bubblewrap" error, with the reason in the report.
"""

from __future__ import annotations

import pytest

from agentbus.gateway.isolation import Isolation


def sandbox_works() -> bool:
    """Whether a sandboxed agent can start on this machine."""
    try:
        Isolation().check()
    except Exception:
        return False
    return True


needs_bwrap = pytest.mark.skipif(not sandbox_works(), reason="bubblewrap cannot run here")
