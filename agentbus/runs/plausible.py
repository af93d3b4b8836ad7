"""Outcomes a run's log cannot hold: what resume refuses to count.

Resume rebuilds v(S) from the counted ``episode.ended`` events as they stand
in ``events.jsonl``. A line edited by hand, or written by anything that
reached the file, would enter the estimate unchecked; the values no run of
agentbus writes are refused with the line named instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentbus.core.events import EPISODE_ENDED, EPISODE_STARTED
from agentbus.core.record import payload_counts


def impossible_outcome(event: Mapping[str, Any], started: set[str]) -> str | None:
    """What makes a counted ``episode.ended`` impossible, or None (also notes starts).

    Resume counts the log's outcomes as they stand, so a hand-edited line
    (or one an agent wrote, had it reached the file) would enter v(S): a
    reward outside [0, 1] or not a number, a success flag that is no boolean,
    or a success for an episode the log never started (checked once the log
    has any ``episode.started``: runs that record none are not judged).
    """
    kind = event.get("type")
    eid = event.get("episode_id")
    if kind == EPISODE_STARTED and isinstance(eid, str):
        started.add(eid)
        return None
    if kind != EPISODE_ENDED or not payload_counts(event):
        return None
    outcome = event.get("outcome")
    if not isinstance(outcome, Mapping):
        return "an episode.ended event without an outcome object"
    reward = outcome.get("reward", 0.0)
    if isinstance(reward, bool) or not isinstance(reward, int | float) or not 0 <= reward <= 1:
        return f"episode {eid!r} has reward {reward!r}, not a number in [0, 1]"
    success = outcome.get("success", False)
    if not isinstance(success, bool):
        return f"episode {eid!r} has success {success!r}, not true or false"
    if success and started and eid not in started:
        return f"episode {eid!r} succeeded but was never started in this log"
    return None


__all__ = ["impossible_outcome"]
