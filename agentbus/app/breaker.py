"""The breaker that stops a run whose infrastructure keeps failing or is misconfigured."""

from __future__ import annotations

import anyio

from agentbus.app.misconfig import MisconfigWatch
from agentbus.core.record import EpisodeRecord

#: stop early when this many episodes in a row failed on the infrastructure
INFRA_BREAKER = 25


class Breaker:
    """Stops a run whose infrastructure keeps failing, or that is misconfigured.

    ``watch`` (a user's agent, without --keep-going) reads the first block of
    episodes; when it names a misconfiguration the run stops and
    :func:`evaluate` raises it as one line (exit 2).
    """

    def __init__(self, threshold: int = INFRA_BREAKER, watch: MisconfigWatch | None = None) -> None:
        self.threshold = threshold
        self.watch = watch
        self.misconfigured: str | None = None
        self.streak = 0
        self.total = 0
        self.first: str | None = None
        self.tripped = anyio.Event()
        #: the failures in a row that tripped it (episodes in flight still end afterwards,
        #: and a healthy server's success resets the running streak)
        self.tripped_at = 0

    def record(self, record: EpisodeRecord) -> None:
        if self.watch is not None and self.misconfigured is None:
            self.misconfigured = self.watch.record(record)
            if self.misconfigured is not None:
                self.tripped.set()
        if record.counts:
            self.streak = 0
            return
        self.total += 1
        self.streak += 1
        self.first = self.first or record.outcome.error
        if self.streak >= self.threshold and not self.tripped.is_set():
            self.tripped_at = self.streak
            self.tripped.set()

    def reason(self) -> str | None:
        """Why the run stopped early, if the breaker tripped."""
        if not self.tripped.is_set():
            return None
        if self.misconfigured is not None:
            return self.misconfigured
        return (
            f"stopped after {self.tripped_at} episodes in a row failed on the "
            f"infrastructure; first error: {self.first}"
        )
