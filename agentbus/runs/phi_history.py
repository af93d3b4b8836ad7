"""The course of the attribution estimates over a run, condensed for the dashboard's plot.

Every ``attribution.snapshot`` event carries the whole estimate (coalition
tables, Shapley and Banzhaf, several KB per test model), and the service
publishes one a second. Replaying all of them to every page that opens
would cost megabytes, so the live server folds them, as it reads the log,
into one small point per snapshot: how many episodes the estimate rests on,
whether it is estimable (and why not), and per test model and slot the
Shapley value with its 95% interval. Consecutive snapshots resting on the
same data collapse into one point, and a long run keeps at most ``cap``
points (older ones are thinned evenly), so a page opened late, or after the
run, draws the same course a page open from the start saw.

A snapshot that is not estimable carries no numbers at all: the plot leaves
that stretch empty and the page shows the reason instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentbus.runs.snapshots import normalize_snapshot, snapshot_note

#: points kept per run before the older half is thinned
DEFAULT_CAP = 2000

Point = dict[str, Any]


def _count(event: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = event.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def condense(event: Mapping[str, Any]) -> Point:
    """One plot point from one snapshot payload (any of the shapes the dashboard reads).

    ``estimable`` is the payload's own flag; a payload from before that flag
    counts as estimable when it holds any Shapley value (the service sent
    ``shapley: null`` while it had none).
    """
    rows = normalize_snapshot(event)
    flag = event.get("estimable")
    estimable = bool(rows) if flag is None else bool(flag) and bool(rows)
    models: dict[str, dict[str, list[float | None]]] = {}
    if estimable:
        for row in rows:
            per_slot = models.setdefault(str(row.get("model") or ""), {})
            per_slot[str(row["slot"])] = [row["phi"], row.get("lo"), row.get("hi")]
    reason = None
    if not estimable:
        given = event.get("reason")
        reason = str(given) if given else (snapshot_note(event) or "no estimate yet")
        if reason.startswith("not estimable yet: "):
            reason = reason[len("not estimable yet: ") :]
    return {
        "seq": event.get("seq"),
        "episodes": _count(event, "episodes", "n", "n_episodes", "count"),
        "episodes_ended": _count(event, "episodes_ended"),
        "admitted_tasks": _count(event, "admitted_tasks"),
        "estimable": estimable,
        "reason": reason,
        "models": models,
    }


class PhiHistory:
    """The condensed course of one run's snapshots, in log order."""

    def __init__(self, cap: int = DEFAULT_CAP) -> None:
        self.cap = max(4, cap)
        self.points: list[Point] = []

    def add(self, event: Mapping[str, Any]) -> None:
        """Fold one snapshot event in (the caller feeds them in log order)."""
        point = condense(event)
        if self.points and _same_data(self.points[-1], point):
            return  # nothing new; keeping the older seq lets clients poll "since" safely
        self.points.append(point)
        if len(self.points) > self.cap:
            self._thin()

    def since(self, seq: int) -> list[Point]:
        """The points of snapshots logged after ``seq`` (all of them for -1)."""
        return [p for p in self.points if isinstance(p["seq"], int) and p["seq"] > seq]

    def _thin(self) -> None:
        """Drop every other point of the older half: detail stays where the run is now."""
        half = len(self.points) // 2
        older = self.points[:half]
        self.points = older[::2] + self.points[half:]


def _same_data(a: Point, b: Point) -> bool:
    return (
        a["estimable"] == b["estimable"]
        and a["episodes"] == b["episodes"]
        and a["reason"] == b["reason"]
        and a["models"] == b["models"]
    )
