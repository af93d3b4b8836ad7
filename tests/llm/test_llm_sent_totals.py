"""The sent totals: a call file's bill and the budget's spend over records report them alike.

results.json's cost section takes ``sent_*`` either from the call file
(:class:`agentbus.llm.billing.Bill`) or, without one, from the episode
records (:class:`agentbus.app.budget.Spend`); both must name and add the
same numbers, cached input tokens included.
"""

from __future__ import annotations

from typing import Any

from agentbus.app.budget import Spend
from agentbus.core.environment import Task
from agentbus.core.episode import EpisodeSpec
from agentbus.core.outcome import Outcome, SlotUsage
from agentbus.core.record import EpisodeRecord
from agentbus.llm.billing import Bill
from agentbus.llm.prices import PriceTable

PRICES = PriceTable({"sim:strong": {"input": 1e6, "output": 2e6, "cached_input": 5e5}})
CALLS = [(100, 40, 10), (50, 0, 5), (7, 7, 3)]  # (prompt, cached prompt, completion) tokens
SENT = {
    "sent_calls": 3,
    "sent_tokens": 175,
    "sent_input_tokens": 157,
    "sent_cached_input_tokens": 47,
    "sent_output_tokens": 18,
}


def _completion(prompt: int, cached: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "cached_prompt_tokens": cached,
        "completion_tokens": completion,
    }


def test_a_bill_totals_its_calls() -> None:
    bill = Bill()
    for call in CALLS:
        bill.add("planning", "sim:strong", _completion(*call))
    summary = bill.summary(PRICES)
    assert {k: summary[k] for k in SENT} == SENT
    assert summary["billed_usd"] > 0 and summary["source"] == "call log"
    assert summary["by_slot"]["planning"]["sim:strong"]["cached_input_tokens"] == 47


def test_the_spend_over_records_totals_the_same() -> None:
    spend = Spend()
    for i, (prompt, cached, completion) in enumerate(CALLS):
        usage = SlotUsage(
            model="sim:strong",
            sent_calls=1,
            sent_input_tokens=prompt,
            sent_cached_input_tokens=cached,
            sent_output_tokens=completion,
        )
        spec = EpisodeSpec(
            episode_id=f"e{i}",
            task=Task(id=f"t{i}", env="math", instruction="x"),
            env_factory=lambda: None,  # type: ignore[arg-type,return-value]
            actors=[],
        )
        outcome = Outcome(reward=1.0, success=True, usage={"planning": usage})
        spend.observe(EpisodeRecord.build(spec, outcome, PRICES))
    summary = spend.summary()
    assert {k: summary[k] for k in SENT} == SENT
    assert summary["attempts"] == 3 and spend.tokens == 175
    assert list(summary)[:6] == ["billed_usd", *SENT]
