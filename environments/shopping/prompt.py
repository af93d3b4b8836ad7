"""Reading a PRAF prompt for the shopping expert.

Replaying the history's rounds tells the expert the page the agent is on.

The parsing is shared with the other ``verb[argument]`` environments
(:mod:`agentbus.envkit.history`); only the action verbs are this
environment's.
"""

from __future__ import annotations

from agentbus import last_action

VERBS: tuple[str, ...] = ("search", "click")


def proposed_action(text: str) -> str | None:
    """The last ``search[...]`` / ``click[...]`` a text proposes, normalised."""
    return last_action(text, VERBS)


__all__ = ["VERBS", "proposed_action"]
