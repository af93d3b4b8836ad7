"""CapaBench's four-module agent (planning, reasoning, action, reflection) as actors.

``AGENT`` maps each slot to the registry name of the module filling it, so a
coalition run can swap any slot's model while keeping the workflow. ``SLOTS``
lists the slots in CapaBench's order (the order coalition keys use).
"""

from __future__ import annotations

SLOTS: tuple[str, ...] = ("planning", "reasoning", "action", "reflection")

AGENT: dict[str, str] = {
    "planning": "praf.planning",
    "reasoning": "praf.reasoning",
    "action": "praf.action",
    "reflection": "praf.reflection",
}

#: ``--preset capabench``: today's default game, the four PRAF modules swapped
#: between a weak default model and the model under test
PRESET: dict[str, object] = {
    "agent": "praf",
    "default": "sim:weak",
    "test": ["sim:strong"],
}

__all__ = ["AGENT", "PRESET", "SLOTS"]
