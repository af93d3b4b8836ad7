"""Reading a PRAF prompt for the ticket expert.

Replaying the history's rounds tells the expert what has been looked up.

The parsing is shared with the other ``verb[argument]`` environments
(:mod:`agentbus.envkit.history`); only the action verbs are this
environment's.
"""

from __future__ import annotations

from agentbus import last_action

VERBS: tuple[str, ...] = ("flights", "calendar", "book")


def proposed_action(text: str) -> str | None:
    """The last ``flights[...]`` / ``calendar[...]`` / ``book[...]`` a text proposes, normalised."""
    return last_action(text, VERBS)


__all__ = ["VERBS", "proposed_action"]
