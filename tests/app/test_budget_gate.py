"""The budget is a cap (issue 29, point 7): admission keeps the projected cost in flight within it.

Unit tests of the gate's projection (per model assignment, episodes in flight
priced as if they run to the step limit, a few at a time while a model's cost
is unknown), and one real run through the CLI whose billed cost must end
within 5% of ``--budget-usd``. Before, the gate projected every episode at the
mean so far, zero before any had ended: the default run started all 480
episodes at once and billed $0.93 of $0.50.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agentbus.app.budget import START_IN_FLIGHT, AssignmentCosts, BudgetGate, Spend
from agentbus.core.environment import Task
from agentbus.core.episode import EpisodeSpec
from agentbus.core.outcome import Outcome, SlotUsage
from agentbus.core.record import EpisodeRecord

STRONG = {"planning": "sim:strong", "action": "sim:strong"}
WEAK = {"planning": "sim:weak", "action": "sim:weak"}


def spec(i: int, assignment: dict[str, str]) -> EpisodeSpec:
    return EpisodeSpec(
        episode_id=f"e{i}",
        task=Task(id=f"t{i}", env="math", instruction="x"),
        env_factory=lambda: None,  # type: ignore[arg-type,return-value]
        actors=[],
        metadata={"assignment": assignment, "slots": ["planning", "action"]},
    )


def record(i: int, assignment: dict[str, str], usd: float, steps: int) -> EpisodeRecord:
    usage = {
        slot: SlotUsage(model=model, calls=steps, sent_calls=steps, sent_usd=usd / 2)
        for slot, model in assignment.items()
    }
    outcome = Outcome(reward=1.0, success=True, steps=steps, usage=usage)
    return EpisodeRecord.build(spec(i, assignment), outcome)


def test_costs_are_learnt_per_slot_and_model_and_long_episodes_dominate() -> None:
    costs = AssignmentCosts(step_limit=10)
    key = tuple(sorted(STRONG.items()))
    assert not costs.knows(key)
    costs.observe(record(0, STRONG, 0.01, steps=1))  # a short first episode
    assert costs.knows(key) and costs.mean(key) == pytest.approx(0.01)
    # one step of 0.01: to the 10-step limit, 55 first steps' worth
    assert costs.bound(key) == pytest.approx(0.55)
    costs.observe(record(1, STRONG, 0.55, steps=10))  # a long one: the fit follows it
    assert costs.bound(key) == pytest.approx(0.56 / 56 * 55)
    # what planning on sim:strong costs prices a mixed assignment too
    mixed = (("action", "sim:weak"), ("planning", "sim:strong"))
    assert not costs.knows(mixed)


async def _admitted(gate: BudgetGate, specs: list[EpisodeSpec]) -> list[str]:
    out: list[str] = []

    async def source():  # type: ignore[no-untyped-def]
        for s in specs:
            yield s

    with anyio.move_on_after(0.5):
        async for s in gate.gate(source(), lambda: None):
            out.append(s.episode_id)
    return out


async def test_a_few_at_a_time_until_costs_are_known_then_what_fits() -> None:
    spend = Spend()
    running = [START_IN_FLIGHT]  # the runtime's count: what the gate handed out is running
    gate = BudgetGate(spend, usd=1.0, tokens=None, in_flight=lambda: running[0])
    specs = [spec(i, STRONG) for i in range(40)]
    first = await _admitted(gate, specs)
    assert len(first) == START_IN_FLIGHT  # nothing known: the rest waits
    assert gate.stopped_at is None
    # one ends: 0.01 for one step; each in flight may cost 0.55 (see above)
    running[0] = START_IN_FLIGHT - 1
    ended = record(0, STRONG, 0.01, steps=1)
    spend.observe(ended)
    gate.observe(EpisodeRecord.model_validate({**ended.model_dump(), "episode_id": "e0"}))
    assert gate.fits(spec(99, STRONG)) is None  # 0.01 + 8 x 0.55 > 1: wait for them
    for i in range(1, START_IN_FLIGHT):
        gate.running.pop(f"e{i}")
    running[0] = 0
    assert gate.fits(spec(99, STRONG)) is True  # 0.01 + 0.55 fits
    gate.running["x"] = tuple(sorted(STRONG.items()))
    running[0] = 1
    assert gate.fits(spec(99, STRONG)) is None  # 0.01 + 2 x 0.55 does not, while x runs
    del gate.running["x"]
    spend.usd = 0.995
    assert gate.fits(spec(99, STRONG)) is False  # alone it would pass: the run stops
    assert gate.stopped is not None and "would pass $1.00" in gate.stopped


ASSIGNMENTS = (
    {"planning": "sim:strong", "action": "sim:strong"},
    {"planning": "sim:strong", "action": "sim:weak"},
    {"planning": "sim:weak", "action": "sim:strong"},
    {"planning": "sim:weak", "action": "sim:weak"},
)
#: USD of one step-unit per slot and model; an episode of s steps costs s(s+1)/2 units
UNIT = {"sim:strong": 0.002, "sim:weak": 0.0001}


def priced(i: int, assignment: dict[str, str], steps: int) -> EpisodeRecord:
    units = steps * (steps + 1) / 2
    usage = {
        slot: SlotUsage(model=model, calls=steps, sent_calls=steps, sent_usd=cost)
        for slot, model in assignment.items()
        for cost in (UNIT[model] * units,)
    }
    outcome = Outcome(reward=1.0, success=True, steps=steps, usage=usage)
    return EpisodeRecord.build(spec(i, assignment), outcome)


async def drive(budget: float, seed: int, episodes: int = 3000) -> tuple[float, BudgetGate]:
    """Every episode the gate admits starts at once and ends after a random delay.

    No concurrency limit besides the gate's own: the load of a busy machine
    (completions slowed and reordered, many admitted before any ends) at its
    worst. Step counts are random from 1 to the step limit, so the short
    ones end first.
    """
    import random

    rng = random.Random(seed)
    spend = Spend()
    active = [0]
    gate = BudgetGate(spend, usd=budget, tokens=None, in_flight=lambda: active[0])

    async def source():  # type: ignore[no-untyped-def]
        for i in range(episodes):
            yield spec(i, ASSIGNMENTS[rng.randrange(len(ASSIGNMENTS))])

    async def run(s: EpisodeSpec) -> None:
        steps = rng.randint(1, 10)
        await anyio.sleep(0.0005 * steps * rng.random())
        r = priced(int(s.episode_id[1:]), s.metadata["assignment"], steps)
        spend.observe(r)
        gate.observe(r)
        active[0] -= 1

    async with anyio.create_task_group() as tg:
        async for s in gate.gate(source(), lambda: None):
            active[0] += 1
            tg.start_soon(run, s)
    return spend.usd, gate


@pytest.mark.parametrize("budget", [2.0, 3.0, 5.0])
async def test_the_budget_is_a_cap_at_high_concurrency_with_slowed_completions(
    budget: float,
) -> None:
    """Billed never passes the budget by more than the gate states, on 4 seeds each.

    Here no episode can cost more than its reservation (s(s+1)/2 units is at
    most the step limit's), so the stated excess is at most 0 and billed
    must stay within the budget. The gate that priced the last episodes at
    their mean passed it.
    """
    for seed in range(4):
        billed, gate = await drive(budget, seed)
        assert gate.stopped_at is not None and gate.stopped is not None
        # no episode here can cost more than its reservation: the stated bound is 0
        # (up to rounding: a cost and its reservation are sums in different orders)
        assert gate.stopped_at["overshoot_bound_usd"] <= 1e-12, gate.stopped_at
        assert billed <= budget + 1e-12, (budget, seed, billed)
        # and it is a cap, not a stop far short: within one strong-strong reservation
        assert billed >= budget - 2 * UNIT["sim:strong"] * 55, (budget, seed, billed)


@pytest.mark.slow
def test_a_run_stops_within_5_percent_of_its_budget(tmp_path: Path) -> None:
    """The default run (30 tasks, 16 coalitions) with $1 of its ~$7: billed $0.95-1.05."""
    budget = 1.0
    proc = subprocess.run(
        [sys.executable, "-m", "agentbus.run", "--budget-usd", str(budget), "--sim-speed", "0",
         "--sim-transport", "inprocess", "--progress", "off", "--no-plots", "--no-trace",
         "--run-dir", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    cost = json.loads((tmp_path / "run" / "results.json").read_text())["cost"]
    billed = cost["run"]["billed_usd"]
    assert cost["budget"]["stopped"] is not None
    # a cap: never past the budget by more than the gate states (the excess over their
    # reservations of the episodes in flight at its last admission), whatever the load
    stated = cost["budget"]["stopped_at"]["overshoot_bound_usd"]
    assert billed <= budget + stated + 1e-9, (billed, stated)
    assert billed <= 1.05 * budget, billed
    assert 0.95 * budget <= billed, billed
    # The stated bound itself depends on which episodes happened to be in flight at the
    # last admission (0 to 0.051 of the budget seen on an idle machine, old gate and new),
    # so only its order of magnitude is a property of the gate: a bound of a quarter of
    # the budget would tell a user nothing.
    assert 0 <= stated <= 0.25 * budget, stated
