"""Cost arithmetic against hand-computed cases, the price table and its errors.

Every figure below is worked out by hand from the prices in the test
(USD per million tokens), so a change in the arithmetic (cached tokens
billed at the input rate, output at the input rate, a missing 1e6) fails.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentbus.app.budget import BudgetGate, RunEstimate, Spend
from agentbus.core.environment import Task
from agentbus.core.episode import EpisodeSpec
from agentbus.core.errors import UserError
from agentbus.core.outcome import Outcome, SlotUsage
from agentbus.core.record import EpisodeRecord
from agentbus.llm.prices import GpuPrice, Price, PriceTable, builtin_source
from attribution.cost import cost_summary

ROOT = Path(__file__).resolve().parents[2]


def test_price_cost_with_cached_input() -> None:
    price = Price(input=2.5, cached_input=1.25, output=10.0)
    # 600 fresh input x 2.5 + 400 cached x 1.25 + 100 output x 10 = 1500 + 500 + 1000
    assert price.cost(1000, 400, 100) == pytest.approx(3000 / 1e6)
    # no cached price: cached tokens are billed as input
    plain = Price(input=3.0, output=15.0)
    assert plain.cost(1000, 400, 100) == pytest.approx((1000 * 3 + 100 * 15) / 1e6)
    # cached tokens can never exceed the input they are part of
    assert price.cost(100, 500, 0) == pytest.approx(100 * 1.25 / 1e6)


def test_builtin_table_has_dated_sources_and_known_models() -> None:
    table = PriceTable()
    src = builtin_source()
    assert src["taken"] and "openai.com" in src["openai"] and "anthropic.com" in src["anthropic"]
    gpt = table.price("openai:gpt-4o-mini")
    assert gpt == Price(input=0.15, cached_input=0.075, output=0.6)
    sonnet = table.price("anthropic:claude-sonnet-4-5")
    assert sonnet is not None and sonnet.cost(1000, 400, 100) == pytest.approx(
        (600 * 3.0 + 400 * 0.3 + 100 * 15.0) / 1e6
    )
    # a provider model reached through a gateway URL keeps its list price
    assert table.price("openai:http://gw.example/v1#gpt-4o-mini") == gpt
    for profile in ("weak", "strong", "strong-action", "strong-reasoning"):
        assert table.price(f"sim:{profile}") is not None
    weak, strong = table.price("sim:weak"), table.price("sim:strong")
    assert weak is not None and strong is not None and strong.output > 10 * weak.output


def test_overrides_and_gpu_price() -> None:
    vllm = "vllm:http://gpu1:8000/v1#meta-llama/Llama-3.1-8B-Instruct"
    table = PriceTable(
        {
            "sim:weak": {"input": 1.0, "output": 2.0},
            vllm: {"gpu_hour_usd": 3.6},
            "vllm:http://gpu2:8000/v1#m": {"gpu_hour_usd": 3.6, "tokens_per_s": 1000},
        }
    )
    assert table.price("sim:weak") == Price(input=1.0, output=2.0)
    # $3.6/h = $0.001/s; at 1000 tokens/s that is $1e-6 per token = $1 per million
    fixed = table.price("vllm:http://gpu2:8000/v1#m")
    assert fixed is not None and fixed.cost(1000, 0, 500) == pytest.approx(1500 / 1e6)
    assert table.price(vllm) is None  # no rate yet: unpriced, not guessed
    table.set_throughput(vllm, 2000.0)
    measured = table.price(vllm)
    assert measured is not None and measured.input == pytest.approx(0.5)
    assert isinstance(table.entry(vllm), GpuPrice)
    # during a run the router's measured rate prices it (the app sets rate_source)
    live = PriceTable({vllm: {"gpu_hour_usd": 3.6}})
    live.rate_source = lambda model: 4000.0 if model == vllm else None
    priced = live.price(vllm)
    assert priced is not None and priced.output == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"input": -1.0, "output": 1.0}, "invalid price for 'sim:weak': input"),
        ({"input": 1.0, "output": 1.0, "inptu": 2.0}, "inptu: unknown field"),
        ({"gpu_hour_usd": -2.0}, "gpu_hour_usd"),
        ({"input": 1.0}, "output: Field required"),
    ],
)
def test_bad_price_entries_are_one_line(entry: dict[str, float], message: str) -> None:
    with pytest.raises(UserError) as err:
        PriceTable({"sim:weak": entry})
    assert message in str(err.value) and "\n" not in str(err.value)


def test_unknown_model_is_refused_where_cost_is_needed() -> None:
    table = PriceTable()
    assert table.unknown(["sim:weak", "openai:gpt-unknown"]) == ["openai:gpt-unknown"]
    with pytest.raises(UserError, match=r"no price for openai:gpt-unknown \(--budget-usd"):
        table.require(["sim:weak", "openai:gpt-unknown"], "--budget-usd")


def _record(usage: dict[str, SlotUsage], prices: PriceTable, task: str = "t1") -> EpisodeRecord:
    spec = EpisodeSpec(
        episode_id=f"sim:strong|planning|{task}|r0",
        task=Task(id=task, env="math", instruction="x"),
        env_factory=lambda: None,  # type: ignore[arg-type,return-value]
        actors=[],
        metadata={
            "test_model": "sim:strong",
            "coalition": ["planning"],
            "slots": ["planning", "action"],
        },
    )
    return EpisodeRecord.build(spec, Outcome(reward=1.0, success=True, usage=usage), prices)


def test_record_prices_each_slot_agent_and_billed() -> None:
    prices = PriceTable(
        {
            "sim:strong": {"input": 3.0, "cached_input": 0.3, "output": 15.0},
            "sim:weak": {"input": 0.1, "output": 0.2},
        }
    )
    usage = {
        # 4 calls, 1 answered by the run's cache: the agent used 2000/500/400, the run paid less
        "planning": SlotUsage(
            model="sim:strong",
            calls=4,
            input_tokens=2000,
            cached_input_tokens=500,
            output_tokens=400,
            sent_calls=3,
            sent_input_tokens=1500,
            sent_cached_input_tokens=500,
            sent_output_tokens=300,
        ),
        "action": SlotUsage(
            model="sim:weak", calls=2, input_tokens=1000, output_tokens=100, sent_calls=0
        ),
    }
    record = _record(usage, prices)
    plan = record.outcome.usage["planning"]
    # (1500 x 3 + 500 x 0.3 + 400 x 15) / 1e6 and (1000 x 3 + 500 x 0.3 + 300 x 15) / 1e6
    assert plan.cost_usd == pytest.approx(10650 / 1e6)
    assert plan.sent_usd == pytest.approx(7650 / 1e6)
    act = record.outcome.usage["action"]
    assert act.cost_usd == pytest.approx((1000 * 0.1 + 100 * 0.2) / 1e6)
    assert act.sent_usd == 0.0
    assert record.outcome.cost_usd == pytest.approx((10650 + 120) / 1e6)
    assert record.outcome.sent_usd == pytest.approx(7650 / 1e6)
    assert record.outcome.sent_tokens == 1800
    # the record survives the log round trip with its costs
    again = EpisodeRecord.parse(record.payload())
    assert again is not None and again.outcome.cost_usd == record.outcome.cost_usd
    # an unpriced model leaves that slot's cost None, and the episode's too
    usage["action"] = usage["action"].model_copy(update={"model": "sim:custom"})
    bare = _record(usage, PriceTable())
    assert bare.outcome.usage["action"].cost_usd is None and bare.outcome.cost_usd is None


def test_cost_summary_per_coalition_slot_and_run() -> None:
    prices = PriceTable({"sim:strong": {"input": 1.0, "output": 1.0}})
    records = []
    for task, tokens in (("a", 1000), ("b", 3000)):
        usage = {"planning": SlotUsage(model="sim:strong", calls=1, input_tokens=tokens)}
        records.append(_record(usage, prices, task))
    out = cost_summary(records, ["planning", "action"], default_model="sim:weak")
    row = out["models"]["sim:strong"]["coalitions"]["planning"]
    assert row["mean"] == pytest.approx(0.002) and row["n"] == 2
    assert row["ci_low"] >= 0.0  # a cost interval never goes below zero
    assert out["slots"]["planning"]["models"]["sim:strong"]["usd_per_episode"] == pytest.approx(
        0.002
    )
    assert out["run"]["agent_usd"] == pytest.approx(0.004)
    # two coalitions of four have no data: the Shapley value of cost says so
    assert out["models"]["sim:strong"]["shapley"] is None
    assert "not estimable" in out["models"]["sim:strong"]["not_estimable"]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentbus.run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_bad_price_and_unknown_model_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[prices."sim:weak"]\ninput = -0.5\noutput = 1.0\n')
    run_dir = tmp_path / "run"
    proc = _run("--config", str(bad), "--run-dir", str(run_dir), "--no-preflight", cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "invalid price for 'sim:weak': input" in lines[0]
    assert not run_dir.exists()
    proc = _run(
        "--test", "openai:gpt-unknown", "--budget-usd", "1", "--no-preflight",
        "--run-dir", str(run_dir), cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no price for openai:gpt-unknown" in lines[0], lines
    assert not run_dir.exists()


def _billed_record(task: str, usd: int, tokens: int | None = None) -> EpisodeRecord:
    """A coalition record billed ``usd`` dollars (priced at $1 per input token)."""
    prices = PriceTable({"sim:strong": {"input": 1e6, "output": 0.0}})
    usage = {
        "planning": SlotUsage(
            model="sim:strong",
            calls=1,
            input_tokens=usd,
            sent_calls=1,
            sent_input_tokens=usd,
            sent_output_tokens=(tokens or usd) - usd,
        )
    }
    return _record(usage, prices, task)


def test_budget_gate_counts_the_episodes_in_flight() -> None:
    spend = Spend()
    for task in ("a", "b", "c"):
        spend.observe(_billed_record(task, 2, tokens=10))  # $2 and 10 tokens each
    in_flight = [1]
    gate = BudgetGate(spend, usd=10.0, tokens=None, in_flight=lambda: in_flight[0])
    assert gate.allows()  # 6 spent + 2 x (1 in flight + this one) = 10: fits exactly
    in_flight[0] = 2
    assert not gate.allows()  # 6 + 2 x 3 = 12 would pass 10
    assert gate.stopped is not None and "would pass $10.00" in gate.stopped
    tokens = BudgetGate(spend, usd=None, tokens=45, in_flight=lambda: 1)
    assert not tokens.allows() and "tokens sent would pass 45" in (tokens.stopped or "")
    assert BudgetGate(spend, usd=None, tokens=50, in_flight=lambda: 1).allows()
    # complete blocks that cost more per episode than the ended ones: they win
    dear = BudgetGate(spend, usd=10.0, tokens=None, in_flight=lambda: 0, per_episode=lambda: (5, 1))
    assert not dear.allows()  # 6 + 5 x 1 = 11 would pass 10


def test_run_estimate_from_complete_blocks() -> None:
    est = RunEstimate(total_blocks=10)
    for i, usd in enumerate((1, 2, 3, 4)):
        record = _billed_record(f"t{i}", usd)
        est.expect(i, (record.episode_id,), record.task_id)
        est.observe(record)
    assert est.estimate() is None  # 4 blocks: not yet
    record = _billed_record("t4", 5)
    est.expect(4, (record.episode_id,), "t4")
    out = est.estimate()
    assert out is None  # declared, not ended: the block is not complete
    est.observe(record)
    out = est.estimate()
    assert out is not None and out["blocks"] == 5 and out["of"] == 10
    # mean 3 per block x 10 blocks; half-width t(4) x sd/sqrt(5) x 10 x sqrt((10-5)/9)
    half = 2.7764451 * (2.5**0.5 / 5**0.5) * 10 * (5 / 9) ** 0.5
    assert out["usd"] == pytest.approx(30.0)
    assert out["usd_low"] == pytest.approx(30.0 - half, rel=1e-6)
    assert out["usd_high"] == pytest.approx(30.0 + half, rel=1e-6)
    assert est.per_episode() == pytest.approx((3.0, 3.0))  # 15 USD, 15 tokens, 5 attempts
    # a block in flight that spent 1 of the mean 3 is expected to cost 2 more
    est.expect(5, ("x|-|t5|r0",), "t5")
    est.observe(_billed_record("t5", 1))
    assert est.in_blocks() == pytest.approx((2.0, 2.0))


def test_an_additive_cost_prediction_below_zero_is_clipped_and_plots(tmp_path: Path) -> None:
    """Two models' cost gains can add up to a hair below zero: the prediction is 0,
    its interval holds it, and the Pareto figure draws (it once ended a run)."""
    import numpy as np

    from attribution.pareto_plot import _err
    from attribution.pareto_terms import Terms, estimate

    # default costs 1.0; each test model's coalition saves a little more than it costs
    rows = [[1.0, 0.4, 0.9, 0.4, 0.9 + 1e-6 * k] for k in range(8)]
    terms = Terms(
        tasks=[f"t{k}" for k in range(8)], matrix=np.array(rows), kind="cost", single=False
    )
    assert float(terms.combine(terms.matrix.mean(axis=0))) < 0
    est = estimate(terms, floor=0.0)
    assert est["mean"] == 0.0
    assert est["ci_low"] <= est["mean"] <= est["ci_high"]
    _, bars = _err(est)
    assert min(bars[0][0], bars[1][0]) >= 0.0
    below, above = _err({"mean": 0.5, "ci_low": 0.6, "ci_high": 0.7})[1]
    assert below == [0.0] and above[0] > 0
