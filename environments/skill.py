"""How much of a task's difficulty each PRAF role feels, for the experts that scale it.

The math, git and robot experts rate a task's difficulty once (in logits,
the same for every model) and let each role feel a share of it: naming the
method or criticising a wrong step is easier than getting the exact next
move right. That share was written out three times; it lives here once so
the three environments cannot drift apart by accident.
"""

from __future__ import annotations

from types import MappingProxyType

#: the share of a task's difficulty each role feels (a plan or a critique is
#: easier to get right than the exact next move); a role not listed feels it all
ROLE_WEIGHT = MappingProxyType(
    {
        "planning": 0.5,
        "reasoning": 1.0,
        "action": 1.0,
        "reflection": 0.25,
    }
)


def felt(difficulty: float, role: str) -> float:
    """The part of ``difficulty`` (logits) that ``role`` feels (see :data:`ROLE_WEIGHT`)."""
    return difficulty * ROLE_WEIGHT.get(role, 1.0)
