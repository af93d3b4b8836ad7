"""A run's episodes as rows: ``agentbus.export`` files and ``agentbus.load`` DataFrames.

One row per counted episode (the record that counts for its cell, by the run's
own rule; infrastructure errors that were retried or given up are left out,
as they are from every estimate): ids, the test and default model, the
coalition, the model of every slot, reward, success, steps, tokens and cost in
total and per slot, and why it failed (``failure_kind``: the error kind, one
of a user's agent's own failures such as ``agent_crash``, or ``wrong`` for a
task failure; empty on success) with the ``reason``; for a user's own agent
also its ``answer``, the ``expected`` answer and the scorer's ``verdict``.
Rows of the best-combination run, when there is one, have ``kind`` ``best``; the coalition rows
(``kind == "coalition"``) are the ones results.json's coalition means are
taken over.

The DataFrames need pandas (and Parquet needs pyarrow): the ``[data]`` extra.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agentbus.core.errors import UserError
from agentbus.core.events import EPISODE_ENDED
from agentbus.core.inputs import json_object
from agentbus.core.outcome import kind_counts
from agentbus.runs.episodes import coalition_key_of, failure_kind
from agentbus.runs.run_files import EVENTS
from agentbus.runs.runlog import RESULTS, check_run_dir, read_json

if TYPE_CHECKING:
    import pandas as pd

MISSING_DATA = (
    "agentbus.load and Parquet export need pandas and pyarrow: pip install 'agentbus[data]'"
)
FORMATS = ("csv", "jsonl", "parquet")


_ENDED_NEEDLE = f'"{EPISODE_ENDED}"'.encode()


def _counted_events(run_dir: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, event): the ``episode.ended`` event that counts per episode id."""
    chosen: dict[str, tuple[int, dict[str, Any]]] = {}
    with open(run_dir / EVENTS, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            if _ENDED_NEEDLE not in raw or not raw.endswith(b"\n"):
                continue
            event = json_object(raw)
            if event is None or event.get("type") != EPISODE_ENDED:
                continue
            eid = event.get("episode_id")
            outcome = event.get("outcome")
            if not isinstance(eid, str) or not isinstance(outcome, dict):
                continue
            if eid in chosen or not kind_counts(outcome.get("error_kind")):
                continue
            outcome.pop("trace", None)  # rows never need it; keeps memory flat
            chosen[eid] = (number, event)
    yield from chosen.values()


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def answer_columns(outcome: dict[str, Any]) -> dict[str, Any]:
    """The agent's answer, the expected answer and the scorer's verdict (gateway runs).

    ``verdict`` is ``right``, ``partly right``, ``wrong`` or the agent's
    failure kind; all three are None for environments that score otherwise.
    """
    details = _as_dict(outcome.get("details"))
    result = _as_dict(details.get("result"))
    answer = result.get("answer")
    expected = details.get("expected")
    return {
        "answer": None if answer is None else str(answer),
        "expected": None if expected is None else str(expected),
        "verdict": details.get("verdict"),
    }


def episode_rows(run_dir: Path) -> list[dict[str, Any]]:
    """One flat row per counted episode (see the module docstring)."""
    run_dir = check_run_dir(run_dir)
    rows = []
    try:
        events = list(_counted_events(run_dir))
    except OSError as exc:
        raise UserError(f"cannot read {run_dir / EVENTS}: {exc.strerror or exc}") from None
    for number, event in events:
        try:
            rows.append(_row(event))
        except (TypeError, ValueError, AttributeError) as exc:
            raise UserError(
                f"{run_dir / EVENTS} line {number}: malformed episode.ended event "
                f"({type(exc).__name__}: {exc})"
            ) from None
    return rows


def _row(event: dict[str, Any]) -> dict[str, Any]:
    """One episode's row; a field of the wrong type raises (the caller names the line)."""
    outcome = event["outcome"]
    slots = [str(s) for s in event.get("slots") or []]
    coalition = event.get("coalition")
    assignment: dict[str, Any] = _as_dict(event.get("assignment"))
    usage: dict[str, Any] = _as_dict(outcome.get("usage"))
    row: dict[str, Any] = {
        "episode_id": event["episode_id"],
        "kind": str(event.get("kind") or "coalition"),
        "env": event.get("env"),
        "task_id": event.get("task_id"),
        "repeat": int(event.get("repeat", 0) or 0),
        "test_model": event.get("test_model"),
        "default_model": event.get("default_model"),
        "coalition": coalition_key_of(coalition, slots) if isinstance(coalition, list) else "",
        "coalition_size": len(coalition) if isinstance(coalition, list) else 0,
        "reward": float(outcome.get("reward", 0.0) or 0.0),
        "success": bool(outcome.get("success")),
        "steps": int(outcome.get("steps", 0) or 0),
        "prompt_tokens": int(outcome.get("prompt_tokens", 0) or 0),
        "completion_tokens": int(outcome.get("completion_tokens", 0) or 0),
        "llm_calls": int(outcome.get("llm_calls", 0) or 0),
        "cost_usd": 0.0,
        "latency_s": float(outcome.get("latency_s", 0.0) or 0.0),
        "failure_kind": failure_kind(outcome),
        "reason": outcome.get("reason"),
        **answer_columns(outcome),
    }
    total_cost = 0.0
    for slot in slots:
        u = _as_dict(usage.get(slot))
        row[f"model.{slot}"] = assignment.get(slot)
        row[f"tokens.{slot}"] = int(u.get("input_tokens", 0) or 0) + int(
            u.get("output_tokens", 0) or 0
        )
        cost = float(u.get("cost_usd", 0.0) or 0.0)
        row[f"cost_usd.{slot}"] = cost
        total_cost += cost
    row["cost_usd"] = total_cost
    return row


#: first characters a spreadsheet reads as a formula (OWASP's CSV injection list)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet shows as text: a formula start gets a ``'``.

    A dataset id or an agent's answer such as ``=HYPERLINK(...)`` would
    otherwise run when the export is opened in Excel or LibreOffice.
    """
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def write_rows(rows: list[dict[str, Any]], fmt: str, out: Path) -> Path:
    """Write ``rows`` as csv, jsonl or parquet to ``out``."""
    if fmt not in FORMATS:
        raise UserError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    try:
        if fmt == "jsonl":
            with open(out, "wb") as fh:
                for row in rows:
                    fh.write(orjson.dumps(row) + b"\n")
        elif fmt == "csv":
            buf = io.StringIO()
            writer = csv.DictWriter(buf, fieldnames=columns, restval="")
            writer.writeheader()
            writer.writerows({k: csv_cell(v) for k, v in row.items()} for row in rows)
            out.write_text(buf.getvalue(), encoding="utf-8")
        else:
            pd = _pandas()
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise UserError(MISSING_DATA) from None
            pd.DataFrame(rows, columns=columns).to_parquet(out, index=False)
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    return out


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise UserError(MISSING_DATA) from None
    return pandas


@dataclass(frozen=True)
class RunFrames:
    """A run as DataFrames: what ``agentbus.load(RUN_DIR)`` returns."""

    #: one row per counted episode (see :func:`episode_rows`)
    episodes: pd.DataFrame
    #: test_model, coalition, n, mean: the coalition means of results.json
    coalitions: pd.DataFrame
    #: test_model, method (shapley/banzhaf), slot, value, se, ci_low, ci_high
    attribution: pd.DataFrame


def load(run_dir: str | Path) -> RunFrames:
    """The run in ``run_dir`` as pandas DataFrames (needs ``pip install 'agentbus[data]'``)."""
    pd = _pandas()
    run_dir = check_run_dir(Path(run_dir))
    episodes = pd.DataFrame(episode_rows(run_dir))
    results = read_json(run_dir / RESULTS) or {}
    coalitions, attribution = [], []
    models = _as_dict(results.get("models"))
    for model, summary in models.items():
        if not isinstance(summary, dict):
            continue
        for key, cell in (summary.get("coalitions") or {}).items():
            if isinstance(cell, dict):
                coalitions.append(
                    {
                        "test_model": model,
                        "coalition": key,
                        "n": cell.get("n"),
                        "mean": cell.get("mean"),
                    }
                )
        for method in ("shapley", "banzhaf"):
            table = summary.get(method)
            if not isinstance(table, dict):
                continue
            for slot, est in table.items():
                if isinstance(est, dict):
                    attribution.append(
                        {
                            "test_model": model,
                            "method": method,
                            "slot": slot,
                            **{k: est.get(k) for k in ("value", "se", "ci_low", "ci_high")},
                        }
                    )
    return RunFrames(
        episodes=episodes,
        coalitions=pd.DataFrame(coalitions, columns=["test_model", "coalition", "n", "mean"]),
        attribution=pd.DataFrame(
            attribution,
            columns=["test_model", "method", "slot", "value", "se", "ci_low", "ci_high"],
        ),
    )
