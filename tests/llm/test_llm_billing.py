"""The bill is the log (issue 39 item 2): each completed upstream call is one line, with its slot.

An episode's module calls its model through the episode's metered handle;
the call file (llm-cache.jsonl) gets one line per call that went upstream,
tagged with the slot and model, also for sampling the cache may not keep.
The bill read back from the file counts each once, per slot; a file with
fewer calls than the records (a user's own cache directory) gives way to the
records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import orjson

from agentbus.app.costs import billed_markdown
from agentbus.app.llm_totals import whole_bill
from agentbus.core.actor import Actor, on
from agentbus.core.demo import CountdownEnvironment, demo_tasks
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.messages import ActionProposed, Observation
from agentbus.llm.billing import read_bill
from agentbus.llm.cache import FILENAME
from agentbus.llm.config import LLMConfig
from agentbus.llm.prices import PriceTable
from agentbus.llm.router import LLMRouter
from agentbus.llm.types import SamplingParams
from agentbus.sim.config import SimConfig
from agentbus.sim.service import sim_service


class Asks(Actor):
    """Asks its model twice the same (deterministic) and once with sampling, then acts."""

    params: ClassVar[list[SamplingParams]] = []

    @on(Observation)
    async def go(self, msg: Observation) -> ActionProposed:
        assert self.ctx.llm is not None
        for p in self.params:
            await self.ctx.llm.complete([{"role": "user", "content": "## Task\nsay 1"}], p)
        return ActionProposed(text="1")


async def test_every_upstream_call_is_a_line_with_its_slot(tmp_path: Path) -> None:
    Asks.params = [
        SamplingParams(temperature=0.0),
        SamplingParams(temperature=0.0),  # answered by the cache: not a second line
        SamplingParams(temperature=0.9),  # not kept by the cache, still billed
    ]
    async with sim_service(SimConfig(speed=0, experts=[])) as sim:
        async with LLMRouter(LLMConfig(cache_dir=tmp_path), sim=sim) as router:
            spec = EpisodeSpec(
                "bill",
                demo_tasks(1)[0],
                CountdownEnvironment,
                [ActorSpec("planning", Asks, llm=router.client("sim:weak"))],
                max_steps=1,
                metadata={"assignment": {"planning": "sim:weak"}},
            )
            outcome = await Episode(spec).run()
    lines: list[dict[str, Any]] = [
        orjson.loads(line) for line in (tmp_path / FILENAME).read_bytes().splitlines()
    ]
    assert [(line["s"], line["a"], line["k"] is None) for line in lines] == [
        ("planning", "sim:weak", False),
        ("planning", "sim:weak", True),
    ]
    usage = outcome.usage["planning"]
    assert usage.sent_calls == 2 and usage.calls == 3
    bill = read_bill(tmp_path / FILENAME)
    assert bill is not None and bill.calls == 2
    summary = bill.summary(PriceTable())
    row = summary["by_slot"]["planning"]["sim:weak"]
    assert row["calls"] == 2
    assert row["tokens"] == usage.sent_input_tokens + usage.sent_output_tokens
    assert summary["billed_usd"] > 0  # the simulated models have list prices
    md = billed_markdown(summary)
    assert "| planning | `sim:weak` | 2 |" in md


def test_the_records_stand_in_where_the_file_holds_fewer_calls(tmp_path: Path) -> None:
    records = {"sent_calls": 5, "sent_tokens": 50, "billed_usd": 0.5, "attempts": 2}
    assert whole_bill(tmp_path, records)["source"] == "records"  # no file at all
    (tmp_path / FILENAME).write_bytes(
        b'{"k":"a","c":{"prompt_tokens":3,"completion_tokens":1},"s":"x","a":"m"}\n'
        b'{"k":"a","c":{"prompt_tok'  # a line a crash cut short: no answer, no bill
    )
    assert whole_bill(tmp_path, records)["sent_calls"] == 5  # the file misses calls
    fewer = {**records, "sent_calls": 1}
    bill = whole_bill(tmp_path, fewer)
    assert bill["source"] == "call log" and bill["sent_tokens"] == 4
    assert bill["billed_usd"] == 0.5  # no price table: the records' dollars
