"""Times of day as the navigation and ticket environments show them.

Both keep times as whole minutes after midnight (sums and comparisons stay
exact) and print them as a 24-hour ``HH:MM`` clock.
"""

from __future__ import annotations


def clock(minutes: int) -> str:
    """``minutes`` after midnight as ``HH:MM`` (e.g. 545 -> ``09:05``)."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"
