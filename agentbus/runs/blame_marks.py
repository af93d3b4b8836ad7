"""Blame verdicts for the viewer: the decisive call of an episode, episodes by module.

``python -m agentbus.blame`` appends one verdict per episode to the run's
``blame.jsonl``; the viewer reads it to mark the decisive call in a
transcript and to list the blamed episodes per module. The file is small
(one line per blamed episode) and is read afresh on each request, so a blame
run beside an open viewer shows up on reload.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentbus.core.inputs import json_object

FILE = "blame.jsonl"

#: the fields a transcript needs to mark the call
_MARK = (
    "status",
    "slot",
    "rank",
    "step",
    "repair",
    "replays",
    "reason",
    "outcome",
    "repair_rate",
    "placebo_rate",
)


def verdicts(run_dir: Path) -> dict[str, dict[str, Any]]:
    """episode id -> its latest verdict (any repair model); empty without a blame."""
    out: dict[str, dict[str, Any]] = {}
    try:
        raw = (run_dir / FILE).read_bytes()
    except OSError:
        return out
    for line in raw.splitlines():
        entry = json_object(line)
        if entry is not None and isinstance(entry.get("episode_id"), str):
            out[entry["episode_id"]] = {k: entry.get(k) for k in _MARK}
    return out


def mark_of(run_dir: Path, episode_id: str) -> dict[str, Any] | None:
    """The verdict of one episode, or None when it was not blamed."""
    return verdicts(run_dir).get(episode_id)


def by_module(run_dir: Path) -> dict[str, dict[str, list[str]]]:
    """Blamed failures and blamed successes apart (``failures``, ``successes``), each
    grouped by the module of their decisive call, plus ``none`` (no single call
    decides) and ``not replayable``. A verdict without an outcome is a failure's
    (blame wrote no outcome before it could blame successes)."""
    out: dict[str, dict[str, list[str]]] = {"failures": {}, "successes": {}}
    for eid, v in sorted(verdicts(run_dir).items()):
        status = v.get("status")
        key = str(v.get("slot")) if status == "decisive" else str(status).replace("_", " ")
        side = "successes" if v.get("outcome") == "success" else "failures"
        out[side].setdefault(key, []).append(eid)
    return out


__all__ = ["by_module", "mark_of", "verdicts"]
