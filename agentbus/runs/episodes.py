"""An index of a run's episodes, for lists that stay fast at 10,000 episodes.

The dashboard and the viewer never ship the whole log to the browser: they
ask for one page of episodes (``offset``/``limit``) matching filters (task,
coalition, test model, outcome, failure kind), and fetch one episode's full
record only when it is opened. :class:`EpisodeIndex` keeps one small row per
episode (the one that counts, by the same rule as the run's
:class:`~agentbus.core.record.RecordBook`: the first ended event that counts, else
the latest), fed event by event from the log, so a live run and a finished
one are indexed the same way.

It also answers the two questions the coalition diff starts from: which
episodes ran the same task under another coalition, and, for a slot, which
pairs of coalitions that differ only in that slot ended differently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentbus.core.events import EPISODE_ENDED
from agentbus.core.outcome import kind_counts

OUTCOMES = ("success", "failure", "error")


def coalition_key_of(members: Iterable[str], slots: Sequence[str]) -> str:
    """The project's coalition key: members in slot order joined by ``+`` ("" for none)."""
    chosen = set(members)
    return "+".join(s for s in slots if s in chosen)


def failure_kind(outcome: Mapping[str, Any]) -> str:
    """Why an episode failed: its error kind, ``wrong`` for a task failure, "" if solved."""
    kind = outcome.get("error_kind")
    if isinstance(kind, str) and kind:
        return kind
    return "" if outcome.get("success") else "wrong"


def outcome_class(row: Mapping[str, Any]) -> str:
    """``success``, ``failure`` (a task failure that counts) or ``error`` (does not count)."""
    if not row["counts"]:
        return "error"
    return "success" if row["success"] else "failure"


def _usage_totals(usage: Any) -> tuple[int, float]:
    tokens, cost = 0, 0.0
    if isinstance(usage, Mapping):
        for u in usage.values():
            if isinstance(u, Mapping):
                tokens += int(u.get("input_tokens", 0) or 0) + int(u.get("output_tokens", 0) or 0)
                cost += float(u.get("cost_usd", 0.0) or 0.0)
    return tokens, cost


def summary_row(event: Mapping[str, Any], line: int) -> dict[str, Any] | None:
    """The small row kept for one ``episode.ended`` event (None when it is malformed)."""
    eid = event.get("episode_id")
    outcome = event.get("outcome")
    if not isinstance(eid, str) or not isinstance(outcome, Mapping):
        return None
    slots = [str(s) for s in event.get("slots") or []]
    coalition = event.get("coalition")
    key = (
        coalition_key_of(coalition, slots)
        if isinstance(coalition, list) and slots
        else (
            "+".join(map(str, coalition)) if isinstance(coalition, list) else str(coalition or "")
        )
    )
    tokens, cost = _usage_totals(outcome.get("usage"))
    if not tokens:
        tokens = int(outcome.get("prompt_tokens", 0) or 0) + int(
            outcome.get("completion_tokens", 0) or 0
        )
    reward = outcome.get("reward")
    return {
        "episode_id": eid,
        "line": line,
        "seq": event.get("seq"),
        "kind": str(event.get("kind") or "coalition"),
        "task_id": str(event.get("task_id", "")),
        "repeat": int(event.get("repeat", 0) or 0),
        "test_model": str(event.get("test_model") or ""),
        "coalition": key,
        "reward": float(reward) if isinstance(reward, int | float) else 0.0,
        "success": bool(outcome.get("success")),
        "steps": int(outcome.get("steps", 0) or 0),
        "tokens": tokens,
        "cost_usd": cost,
        "counts": kind_counts(outcome.get("error_kind")),
        "failure": failure_kind(outcome),
        "error": outcome.get("error"),
    }


@dataclass
class EpisodeIndex:
    """One row per episode id, in log order; see the module docstring."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    slots: list[str] = field(default_factory=list)
    _at: dict[str, int] = field(default_factory=dict)
    _cells: dict[tuple[str, str, int, str], int] = field(default_factory=dict)

    def add(self, event: Mapping[str, Any], line: int) -> None:
        """Fold in one event of the log (anything but ``episode.ended`` is ignored)."""
        if event.get("type") != EPISODE_ENDED:
            return
        row = summary_row(event, line)
        if row is None:
            return
        if not self.slots and isinstance(event.get("slots"), list):
            self.slots = [str(s) for s in event["slots"]]
        at = self._at.get(row["episode_id"])
        if at is None:
            self._at[row["episode_id"]] = len(self.rows)
            self.rows.append(row)
        elif not self.rows[at]["counts"]:  # a counting retry replaces an error; never the reverse
            self.rows[at] = row
        else:
            return
        if row["kind"] == "coalition":
            cell = (row["test_model"], row["task_id"], row["repeat"], row["coalition"])
            self._cells[cell] = self._at[row["episode_id"]]

    def __len__(self) -> int:
        return len(self.rows)

    def get(self, episode_id: str) -> dict[str, Any] | None:
        at = self._at.get(episode_id)
        return None if at is None else self.rows[at]

    def select(
        self,
        *,
        task: str | None = None,
        coalition: str | None = None,
        model: str | None = None,
        outcome: str | None = None,
        failure: str | None = None,
        newest_first: bool = True,
    ) -> list[dict[str, Any]]:
        """The rows matching every given filter (``task`` matches a substring of the id)."""
        rows: Iterable[dict[str, Any]] = reversed(self.rows) if newest_first else self.rows
        out = []
        for r in rows:
            if task and task not in r["task_id"]:
                continue
            if coalition is not None and r["coalition"] != coalition:
                continue
            if model and r["test_model"] != model:
                continue
            if outcome and outcome_class(r) != outcome:
                continue
            if failure and r["failure"] != failure:
                continue
            out.append(r)
        return out

    def facets(self) -> dict[str, Any]:
        """The values each filter can take, for the filter menus."""
        coalitions: dict[str, int] = {}
        for r in self.rows:
            coalitions.setdefault(
                r["coalition"], len(r["coalition"].split("+")) if r["coalition"] else 0
            )
        return {
            "slots": self.slots,
            "tasks": sorted({r["task_id"] for r in self.rows}),
            "coalitions": sorted(coalitions, key=lambda k: (coalitions[k], self._order(k))),
            "models": sorted({r["test_model"] for r in self.rows if r["test_model"]}),
            "outcomes": list(OUTCOMES),
            "failures": sorted({r["failure"] for r in self.rows if r["failure"]}),
        }

    def _order(self, key: str) -> list[int]:
        members = key.split("+") if key else []
        return [self.slots.index(m) if m in self.slots else len(self.slots) for m in members]

    def same_task(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every coalition's episode of ``row``'s task, repeat and test model."""
        out = []
        for (model, task, repeat, _key), at in self._cells.items():
            if (model, task, repeat) == (row["test_model"], row["task_id"], row["repeat"]):
                out.append(self.rows[at])
        return sorted(
            out, key=lambda r: (len(self._order(r["coalition"])), self._order(r["coalition"]))
        )

    def cell(self, model: str, task: str, repeat: int, coalition: str) -> dict[str, Any] | None:
        at = self._cells.get((model, task, repeat, coalition))
        return None if at is None else self.rows[at]

    def flips(self, slot: str, model: str | None = None) -> list[dict[str, Any]]:
        """Counted episode pairs: one task, coalitions differing only in ``slot``, outcomes not.

        "Putting this slot on the test model changed the outcome": ``without``
        has the slot on the default model, ``with`` on the test model.
        """
        if slot not in self.slots:
            return []
        out = []
        for (m, task, repeat, key), at in self._cells.items():
            if model and m != model:
                continue
            members = set(key.split("+")) if key else set()
            if slot in members:
                continue
            without = self.rows[at]
            partner = self._cells.get(
                (m, task, repeat, coalition_key_of(members | {slot}, self.slots))
            )
            if partner is None:
                continue
            with_ = self.rows[partner]
            if not (without["counts"] and with_["counts"]):
                continue
            if without["success"] == with_["success"] and without["reward"] == with_["reward"]:
                continue
            out.append(
                {
                    "test_model": m,
                    "task_id": task,
                    "repeat": repeat,
                    "without": without,
                    "with": with_,
                    "change": with_["reward"] - without["reward"],
                }
            )
        out.sort(key=lambda f: (-abs(f["change"]), f["task_id"], f["without"]["coalition"]))
        return out
