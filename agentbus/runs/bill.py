"""What a run spent, for the dashboard's cost panel: the bill of a finished run.

While a run goes on the panel shows the projection the run announced (its
first complete task blocks, scaled to the whole run) beside what the ended
episodes have spent so far. Once the run has finished, the projection is
history: the panel shows the bill, the same figures the console's ``cost:``
line printed, read from the ``cost`` section of ``results.json`` that the run
(or ``python -m agentbus.report``) wrote after ``run.finished``. That bill
comes from the run's call file, so it includes the calls of episodes cut short
that no record books; a results.json older than the log's end is stale (a
resumed run that has not written its own yet) and is not used.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

RESULTS = "results.json"


class ResultsBill:
    """The bill in a run directory's results.json, re-read only when the file changes."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / RESULTS
        self._seen: tuple[int, int] | None = None
        self._bill: dict[str, Any] | None = None

    def get(self, finished_ts: float | None) -> dict[str, Any] | None:
        """The bill, when results.json was written at or after ``finished_ts`` (the run's end)."""
        if finished_ts is None:
            return None
        try:
            st = self.path.stat()
        except OSError:
            return None
        if st.st_mtime < finished_ts:
            return None  # written before this run's end: a resumed run's earlier results
        key = (st.st_mtime_ns, st.st_size)
        if key != self._seen:
            try:
                results = orjson.loads(self.path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                return None  # being replaced right now; the next poll reads it
            self._seen, self._bill = key, bill_of(results)
        return self._bill


def bill_of(results: Any) -> dict[str, Any] | None:
    """``{usd, priced, simulated, sent_calls, sent_tokens, agent_usd, unpriced}`` of results."""
    cost = results.get("cost") if isinstance(results, Mapping) else None
    if not isinstance(cost, Mapping) or not isinstance(cost.get("run"), Mapping):
        return None
    run: Mapping[str, Any] = cost["run"]
    prices = (cost.get("prices") or {}).get("per_million_tokens_usd") or {}
    priced = [m for m, p in prices.items() if isinstance(p, Mapping) and p.get("priced")]
    return {
        "usd": run.get("billed_usd") if priced else None,
        "priced": bool(priced),
        # the simulator's prices are list prices: nothing is billed for them
        "simulated": bool(priced) and all(str(m).startswith("sim:") for m in priced),
        "sent_calls": run.get("sent_calls"),
        "sent_tokens": run.get("sent_tokens"),
        "agent_usd": run.get("agent_usd"),
        "unpriced": list(cost.get("unpriced") or []),
        "source": "results.json",
    }


def sent_of(outcome: Mapping[str, Any]) -> tuple[float | None, int, int]:
    """One episode's (billed USD or None when unpriced, calls sent, tokens sent)."""
    usd: float | None = None
    calls = tokens = 0
    usage = outcome.get("usage")
    for row in usage.values() if isinstance(usage, Mapping) else ():
        if not isinstance(row, Mapping):
            continue
        calls += int(row.get("sent_calls") or 0)
        tokens += int(row.get("sent_input_tokens") or 0) + int(row.get("sent_output_tokens") or 0)
        price = row.get("sent_usd")
        if isinstance(price, int | float) and not isinstance(price, bool):
            usd = (usd or 0.0) + float(price)
    return usd, calls, tokens


__all__ = ["RESULTS", "ResultsBill", "bill_of", "sent_of"]
