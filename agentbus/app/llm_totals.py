"""The run's LLM counters over every process that worked on it (resumes included).

The router counts what this process asked and sent; a resumed run's earlier
processes are gone, so their counters are too. Their episodes are not: every
attempt's record in the log carries the calls its modules requested and the
calls, tokens and prices that went upstream. Summing the log gives the whole
run's figures, the same ones the cost line counts, so ``results.json``'s
``llm.run`` and the cost line never disagree after a resume. (Calls of an
episode a crash cut short left no record and are in neither.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentbus.events import RUN_STARTED


def run_llm_totals(log: Path) -> dict[str, Any]:
    """``{requested, sent, sent_tokens, ..., attempts, processes}`` over every attempt."""
    from agentbus.app.budget import Spend
    from attribution.collect import read_records

    spend = Spend()
    requested = 0
    for record in read_records(log):
        spend.observe(record)
        requested += int(record.outcome.llm_calls)
    sent = spend.summary()
    return {
        "requested": requested,
        "sent": sent.pop("sent_calls"),
        **{k: v for k, v in sent.items() if k != "billed_usd"},
        "processes": _processes(log),
    }


def _processes(log: Path) -> int:
    """How many processes worked on the run: one ``run.started`` each."""
    marker = orjson.dumps(RUN_STARTED)
    count = 0
    with open(log, "rb") as fh:
        for line in fh:
            if marker in line and b'"type"' in line:
                try:
                    event = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                count += isinstance(event, dict) and event.get("type") == RUN_STARTED
    return count


__all__ = ["run_llm_totals"]
