"""The cost side of one run, in one object the evaluation calls at a few points.

Prices are checked before anything is written (a negative price, or an
unknown model when ``--budget-usd`` or ``--pareto`` needs prices, is one
line); every record is priced by the runtime (:class:`agentbus.executors.runtime.Runtime`
``prices``); this object keeps the spend, the budget gate and the projection
of the whole run's cost, and writes the ``cost`` section of the results.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

from rich.console import Console

from agentbus.app.budget import AssignmentCosts, BudgetGate, RunEstimate, Spend, estimate_line
from agentbus.app.config import RunConfig
from agentbus.app.llm_totals import whole_bill
from agentbus.core.episode import EpisodeSpec
from agentbus.core.events import COST_ESTIMATE, EventHub
from agentbus.core.record import EpisodeRecord
from agentbus.llm.prices import PriceTable
from agentbus.llm.spec import parse_spec
from attribution.cost import cost_summary


def price_table(config: RunConfig) -> PriceTable:
    """The run's prices; refuses bad entries, and unknown models where cost is needed."""
    prices = PriceTable(config.prices)
    needs = [
        why
        for why, on in (("--budget-usd", config.budget_usd), ("--pareto", config.pareto))
        if on is not None
    ]
    if needs:
        prices.require(config.models(), " and ".join(needs))
    return prices


class RunCost:
    """Spend, budget, projection and results of one run (see the module docstring)."""

    def __init__(self, config: RunConfig, prices: PriceTable, total_blocks: int) -> None:
        self.config = config
        self.prices = prices
        self.spend = Spend()
        self.estimate = RunEstimate(total_blocks)
        self.gate: BudgetGate | None = None
        #: billed cost per model assignment (the budget's projection), replayed ones too
        self.by_assignment = AssignmentCosts()
        self._published = False
        #: the projection as first announced (the final one is the spend itself)
        self.announced: dict[str, Any] | None = None

    def replay(self, records: Iterable[EpisodeRecord]) -> None:
        for record in records:
            self.spend.observe(record)
            self.estimate.observe(record)
            self.by_assignment.observe(record)

    def unpriced_note(self) -> str | None:
        """One line naming models without a price (their cost shows as n/a)."""
        missing = self.prices.unknown(self.config.models())
        if not missing:
            return None
        return (
            f"cost: no price for {', '.join(missing)}; their cost shows as n/a "
            '(add e.g. [prices."MODEL"] input = ..., output = ... to the config)'
        )

    def estimate_text(self, est: dict[str, Any]) -> str:
        """The projection line, in words that fit the run.

        Simulated models are priced at list prices (nothing is billed); with
        no priced model at all only tokens are projected (no "$0 [$0, $0]");
        an adaptive run projects the whole grid, which it usually stops short of.
        """
        models = self.config.models()
        priced = [m for m in models if m not in set(self.prices.unknown(models))]
        if priced:
            line = estimate_line(est)
            if all(m.startswith("sim:") for m in priced):
                line = line.replace("] billed, ", "] at simulated list prices, ", 1)
                line = line.replace(" billed, ", " at simulated list prices, ", 1)
        else:
            tok = f"{est['tokens']:,.0f}"
            if est.get("tokens_low") is not None:
                tok += f" [{est['tokens_low']:,.0f}, {est['tokens_high']:,.0f}]"
            line = (
                f"token estimate for the whole run: {tok} tokens sent (no price for these "
                f"models; from the first {est['blocks']} of {est['of']} task blocks)"
            )
        if self.config.adaptive:
            line = line.replace(
                "for the whole run", "if the whole grid ran (an adaptive run stops sooner)", 1
            )
        return line

    def gated(
        self,
        specs: AsyncIterator[EpisodeSpec],
        stop: Callable[[], None],
        in_flight: Callable[[], int],
    ) -> AsyncIterator[EpisodeSpec]:
        """``specs`` under the run's budget (unchanged without one)."""
        if self.gate is None:
            self.gate = BudgetGate(
                self.spend,
                usd=self.config.budget_usd,
                tokens=self.config.budget_tokens,
                in_flight=in_flight,
                per_episode=self.estimate.per_episode,
                in_blocks=self.estimate.in_blocks,
                costs=self.by_assignment,
            )
        return self.gate.gate(specs, stop)

    @property
    def stopped(self) -> str | None:
        return self.gate.stopped if self.gate is not None else None

    async def observe(self, record: EpisodeRecord, hub: EventHub, console: Console) -> None:
        """Account one record; announce the projection once enough blocks are in."""
        self.spend.observe(record)
        self.estimate.observe(record)
        if self.gate is not None:
            self.gate.observe(record)  # also updates by_assignment
        else:
            self.by_assignment.observe(record)
        await self.maybe_announce(hub, console)

    async def maybe_announce(self, hub: EventHub, console: Console) -> None:
        if self._published:
            return
        est = self.estimate.estimate()
        if est is None:
            return
        self._published = True
        self.announced = est
        console.print(self.estimate_text(est))
        await hub.publish(COST_ESTIMATE, est)

    def watch(self, stats: Callable[[], dict[str, Any]]) -> None:
        """Price GPU-served models from the run's measured throughput (``stats``: the router's).

        A GPU costs its hourly price whether busy or not, so a token costs
        the hour spread over the tokens the replica actually served: tokens
        sent to the model over the seconds since the run began, per replica,
        measured when each record is priced (at most once a second).
        """
        started = time.monotonic()
        cache: dict[str, tuple[float, float | None]] = {}

        def rate(model: str) -> float | None:
            now = time.monotonic()
            hit = cache.get(model)
            if hit is not None and now - hit[0] < 1.0:
                return hit[1]
            spec = parse_spec(model)
            row = (stats().get("models") or {}).get(spec.key) or {}
            tokens = int(row.get("prompt_tokens", 0)) + int(row.get("completion_tokens", 0))
            elapsed = now - started
            value = tokens / elapsed / max(len(spec.base_urls), 1) if tokens and elapsed else None
            cache[model] = (now, value)
            return value

        self.prices.rate_source = rate

    def results(
        self, counted: Iterable[EpisodeRecord], slots: list[str], run_dir: Path | None = None
    ) -> dict[str, Any]:
        """The ``cost`` section of results.json.

        With ``run_dir``, the billed figures are every completed call in its
        call file, over every process of the run (:func:`whole_bill`).
        """
        billed = self.spend.summary()
        if run_dir is not None:
            billed = whole_bill(run_dir, billed, self.prices)
        out = cost_summary(counted, slots, default_model=self.config.default, billed=billed)
        out["prices"] = self.prices.describe(self.config.models())
        out["estimate"] = self.announced
        out["budget"] = {
            "usd": self.config.budget_usd,
            "tokens": self.config.budget_tokens,
            "stopped": self.stopped,
            "stopped_at": self.gate.stopped_at if self.gate is not None else None,
        }
        return out


def cost_markdown(results: dict[str, Any]) -> str:
    """The cost (and Pareto) sections appended to results.md."""
    from agentbus.app.pareto import markdown as pareto_markdown
    from attribution.cost import cost_markdown as tables

    parts = []
    if results.get("cost"):
        parts.append(tables(results["cost"], list(results.get("slots") or [])))
        billed = billed_markdown(results["cost"].get("run") or {})
        if billed:
            parts.append(billed)
        stopped = (results["cost"].get("budget") or {}).get("stopped")
        if stopped:
            parts.append(stopped)
    if results.get("pareto"):
        parts.append(pareto_markdown(results["pareto"]))
    return "".join(f"\n{p}\n" for p in parts)


def billed_markdown(run: dict[str, Any]) -> str:
    """The bill per slot and model: every call sent upstream, over every process of the run."""
    by_slot = run.get("by_slot") or {}
    if not by_slot:
        return ""
    lines = [
        "### Billed per slot",
        "",
        "Every call that went upstream, from the run's call file (llm-cache.jsonl), over "
        "every process of the run (calls of episodes an interruption cut short included).",
        "",
        "| slot | model | calls | tokens in | cached in | tokens out | USD |",
        "|---|---|---|---|---|---|---|",
    ]
    for slot, models in by_slot.items():
        for model, row in models.items():
            usd = "n/a" if row.get("usd") is None else f"{row['usd']:.4f}"
            lines.append(
                f"| {slot} | `{model}` | {row['calls']} | {row['input_tokens']:,} | "
                f"{row['cached_input_tokens']:,} | {row['output_tokens']:,} | {usd} |"
            )
    return "\n".join(lines)


def print_cost(results: dict[str, Any], console: Console, run_dir: Any = None) -> None:
    """The cost tables, the Pareto front and the budget line on the console."""
    from agentbus.app.pareto import render_pareto
    from attribution.cost import render_cost

    cost = results.get("cost")
    if cost:
        console.print(render_cost(cost, list(results.get("slots") or [])))
    if results.get("pareto"):
        console.print(render_pareto(results["pareto"]))
    print_budget_stop(results, console, run_dir)


def print_budget_stop(results: dict[str, Any], console: Console, run_dir: Any = None) -> None:
    """The line saying the budget stopped the run and how to continue it."""
    cost = results.get("cost")
    stopped = ((cost or {}).get("budget") or {}).get("stopped")
    if stopped:
        budget = cost["budget"] if cost else {}
        flag = "--budget-usd" if budget.get("usd") is not None else "--budget-tokens"
        console.print(
            f"{stopped}; resume with a larger budget to continue: "
            f"python -m agentbus.run --resume {run_dir} {flag} N"
        )
