"""The run's LLM counters over every process that worked on it (resumes included).

The router counts what this process asked and sent; a resumed run's earlier
processes are gone, so their counters are too. Their episodes are not: every
attempt's record in the log carries the calls its modules requested and the
calls, tokens and prices that went upstream. Summing the log gives the whole
run's figures, the same ones the cost line counts, so ``results.json``'s
``llm.run`` and the cost line never disagree after a resume.

Records miss the calls of episodes that were cut short (Ctrl-C, a kill, a
dead server): those calls were paid, and a resume reads their answers back
as free. The calls sent are therefore taken from the run's call file
(:mod:`agentbus.llm.billing`), which holds every completed upstream call of
every process; the records' sums stand in only where that file is missing or
holds fewer calls than the records (a cache directory of the user's own, or
Ray workers, which keep no file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentbus.core.events import RUN_STARTED
from agentbus.core.inputs import json_object


def run_llm_totals(log: Path) -> dict[str, Any]:
    """``{requested, sent, sent_tokens, ..., attempts, processes}`` over every attempt."""
    from agentbus.app.budget import Spend
    from attribution.collect import read_records

    spend = Spend()
    requested = 0
    for record in read_records(log):
        spend.observe(record)
        requested += int(record.outcome.llm_calls)
    sent = whole_bill(log.parent, spend.summary())
    return {
        "requested": requested,
        "sent": sent.pop("sent_calls"),
        **{k: v for k, v in sent.items() if k not in ("billed_usd", "by_slot")},
        "processes": _processes(log),
    }


def whole_bill(run_dir: Path, from_records: dict[str, Any], prices: Any = None) -> dict[str, Any]:
    """The run's bill: its call file's, or ``from_records`` (a Spend summary) without one.

    ``prices`` (a :class:`~agentbus.llm.prices.PriceTable`) prices the file's
    calls; without it the dollars are the records' (calls of cut-short
    episodes unpriced).
    """
    from agentbus.llm.billing import read_bill
    from agentbus.llm.cache import FILENAME

    bill = read_bill(run_dir / FILENAME)
    if bill is None or bill.calls < int(from_records.get("sent_calls") or 0):
        return {**from_records, "source": "records"}
    out = bill.summary(prices)
    if prices is None:
        out["billed_usd"] = from_records.get("billed_usd", 0.0)
    out["attempts"] = from_records.get("attempts", 0)
    return out


def _processes(log: Path) -> int:
    """How many processes worked on the run: one ``run.started`` each."""
    marker = orjson.dumps(RUN_STARTED)
    count = 0
    with open(log, "rb") as fh:
        for line in fh:
            if marker in line and b'"type"' in line:
                event = json_object(line)
                count += event is not None and event.get("type") == RUN_STARTED
    return count


__all__ = ["run_llm_totals", "whole_bill"]
