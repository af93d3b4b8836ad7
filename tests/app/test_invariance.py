"""Results do not depend on concurrency, nor on injected server faults.

Other harnesses lose or change outcomes when concurrency rises (more
zero-reward runs at 16x concurrency, infrastructure failures counted as task
failures). Here, at temperature 0, each (coalition, task) has one fixed
outcome: the same whether one episode runs at a time, 64 or 1,000, and the
same when 10% of the model calls fail (429, 500, dropped connection) and are
retried. The run is the whole application in process (in-process simulator,
speed 0, a few tasks), and the outcomes are read back from its event log
through the counting rule, the way every reader of a run reads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.console import Console

from agentbus.app.config import build_config
from agentbus.app.evaluate import evaluate
from agentbus.core.record import EpisodeRecord, RecordBook

TASKS = 3
SLOTS = 4
#: 10% of calls fail: 4% rate-limited, 3% server errors, 3% dropped connections
FAULTS = {"rate_429": 0.04, "rate_500": 0.03, "rate_drop": 0.03, "retry_after_s": 0, "seed": 7}

Outcomes = dict[tuple[str, str], tuple[float, bool, int]]


async def outcomes(run_dir: Path, concurrency: int, faults: dict[str, Any]) -> tuple[Outcomes, Any]:
    config = build_config(
        {
            "env": "math",
            "tasks": TASKS,
            "progress": "off",
            "plots": False,
            "trace": False,
            "run_dir": str(run_dir),
            "concurrency": concurrency,
            "sim": {"speed": 0, "transport": "inprocess", "faults": faults},
            "llm": {
                "sim_transport": "inprocess",
                "limits": {"backoff_base": 0, "backoff_max": 0, "max_concurrency": 1000},
            },
        }
    )
    report = await evaluate(config, Console(quiet=True))
    book = RecordBook()
    for line in (run_dir / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event["type"] == "episode.ended":
            record = EpisodeRecord.parse(event)
            assert record is not None
            book.add(record)
    table = {
        (r.coalition_key, r.task_id): (r.reward, r.outcome.success, r.outcome.steps)
        for r in book.records()
    }
    return table, report


@pytest.mark.slow
async def test_outcomes_are_the_same_at_concurrency_1_64_1000_with_and_without_faults(
    tmp_path: Path,
) -> None:
    reference: Outcomes | None = None
    for faulty in (False, True):
        for concurrency in (1, 64, 1000):
            run_dir = tmp_path / f"c{concurrency}-{'faults' if faulty else 'clean'}"
            table, report = await outcomes(run_dir, concurrency, FAULTS if faulty else {})
            assert len(table) == TASKS * 2**SLOTS, "a cell was lost"
            assert report.given_up == 0
            llm = report.results["llm"]["total"]
            if faulty:  # the faults really struck, and were retried below the episode
                assert llm["retries"] > 0
            else:
                assert llm["retries"] == 0
            if reference is None:
                reference = table
                # not a degenerate grid: some cells succeed and some fail
                assert 0 < sum(ok for _, ok, _ in table.values()) < len(table)
                continue
            diff = {k: (reference[k], table[k]) for k in reference if reference[k] != table[k]}
            assert not diff, f"concurrency {concurrency}, faults {faulty}: {diff}"
