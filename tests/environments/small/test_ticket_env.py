"""The ticket environment: exact optimum, lookups, bookings and malformed actions."""

from __future__ import annotations

import itertools

import pytest

from agentbus import ActionProposed, TaskSource
from environments.ticket.env import TicketEnvironment
from environments.ticket.generator import make_pair
from environments.ticket.world import (
    AIRPORT_MINUTES,
    CONFLICT_COST,
    GAP_PER_HOUR,
    Traveller,
    solve,
)


def brute_cost(a: Traveller, fa_i: int, b: Traveller, fb_i: int) -> float:
    """The cost written out again from the rules, independently of ``world.cost``."""
    fa, fb = a.flights[fa_i], b.flights[fb_i]
    total = fa.price + fb.price + GAP_PER_HOUR * abs(fa.arrive - fb.arrive) / 60
    for t, f in ((a, fa), (b, fb)):
        busy = range(f.depart - AIRPORT_MINUTES, f.arrive)
        if any(set(busy) & set(range(e.start, e.end)) for e in t.calendar):
            total += CONFLICT_COST
    return total


@pytest.mark.parametrize("index", range(10))
def test_optimum_matches_brute_force(index: int) -> None:
    a, b, _ = make_pair(2, index)
    a = Traveller(a.name, a.origin, a.flights[:5], a.calendar)
    b = Traveller(b.name, b.origin, b.flights[:5], b.calendar)
    best = min(brute_cost(a, i, b, j) for i, j in itertools.product(range(5), range(5)))
    (fa, fb), cost = solve(a, b)
    assert cost == pytest.approx(best)
    i = [f.number for f in a.flights].index(fa)
    j = [f.number for f in b.flights].index(fb)
    assert brute_cost(a, i, b, j) == pytest.approx(best)


async def test_lookups_then_the_optimal_booking_succeeds() -> None:
    setup = TicketEnvironment.setup(TaskSource(count=3, seed=0))
    task = setup.tasks[0]
    env = setup.factory()
    obs = await env.reset(task)
    a, b = (t["name"] for t in task.data["travellers"])
    assert a in obs.text and b in obs.text
    fb = await env.step(ActionProposed(text=f"flights[{a}]"))
    assert fb.valid and "departs" in fb.text
    fb = await env.step(ActionProposed(text=f"calendar[{b}]"))
    assert fb.valid and "busy" in fb.text
    fb = await env.step(ActionProposed(text=f"calendar[{b}]"))
    assert fb.valid and fb.needs_reflection  # a repeated lookup is a wasted step
    fa, fbk = task.hidden["optimum"]
    fb = await env.step(ActionProposed(text=f"book[{a}: {fa}, {b}: {fbk}]"))
    assert fb.done and fb.success
    score = await env.score()
    assert score.reward == 1.0 and score.success


async def test_a_worse_booking_scores_its_cost_ratio() -> None:
    setup = TicketEnvironment.setup(TaskSource(count=1, seed=0))
    task = setup.tasks[0]
    env = setup.factory()
    await env.reset(task)
    optimum = task.hidden["optimum"]
    flights = task.data["travellers"]
    other = next(
        (x[0], y[0])
        for x in flights[0]["flights"]
        for y in flights[1]["flights"]
        if [x[0], y[0]] != optimum
    )
    await env.step(ActionProposed(text=f"book[{other[0]}, {other[1]}]"))
    score = await env.score()
    assert 0.0 < score.reward <= 1.0
    assert score.reward == pytest.approx(task.hidden["optimum_cost"] / score.details["cost"])


@pytest.mark.parametrize(
    "text",
    ["", "book the cheapest", "flights[Nobody]", "book[XX999, YY999]", "book[one]", "calendar["],
)
async def test_malformed_actions_get_a_clear_observation(text: str) -> None:
    setup = TicketEnvironment.setup(TaskSource(count=1, seed=0))
    env = setup.factory()
    await env.reset(setup.tasks[0])
    fb = await env.step(ActionProposed(text=text))
    assert not fb.valid and not fb.done and fb.text.startswith("Invalid action:")


def test_generated_tasks_are_prefix_stable() -> None:
    small = TicketEnvironment.setup(TaskSource(count=3, seed=5)).tasks
    large = TicketEnvironment.setup(TaskSource(count=6, seed=5)).tasks
    assert [t.model_dump() for t in small] == [t.model_dump() for t in large[:3]]
