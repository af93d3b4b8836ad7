"""The navigation environment: exact optimum, seeded arrivals, malformed routes, scoring."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from agentbus import ActionProposed, TaskSource
from environments.navigation.city import City
from environments.navigation.constraints import Constraint
from environments.navigation.env import NavigationEnvironment
from environments.navigation.generator import make_instance
from environments.navigation.route import evaluate, violations
from environments.navigation.solver import solve
from environments.navigation.tasks import optima_of, trip_of


def brute_force(city: City, constraints: list[Constraint]) -> int | None:
    """The shortest feasible route over every ordered subset of places (no pruning)."""
    best: int | None = None
    names = [p.name for p in city.places]
    for k in range(len(names) + 1):
        for route in itertools.permutations(names, k):
            ev = evaluate(city, route)
            if not violations(ev, constraints) and (best is None or ev.tenths < best):
                best = ev.tenths
    return best


@pytest.mark.parametrize("index", range(6))
def test_optimum_matches_brute_force_on_small_cities(index: int) -> None:
    inst = make_instance(3, index)
    city = replace(inst.city, places=inst.city.places[:5])
    names = {p.name for p in city.places}
    constraints = [
        c for c in (*inst.core, *inst.pool) if c.kind not in ("visit", "avoid") or c.value in names
    ]
    for k in range(len(constraints) + 1):
        found = solve(city, constraints[:k])
        expected = brute_force(city, constraints[:k])
        assert (found[1] if found else None) == expected
        if found is not None:
            assert not violations(evaluate(city, found[0]), constraints[:k])


def test_arrivals_are_seeded_and_independent_of_the_routes() -> None:
    a, b = make_instance(0, 4), make_instance(0, 4)
    assert a == b
    assert make_instance(1, 4) != a

    task = NavigationEnvironment.setup(TaskSource(count=5, seed=0)).tasks[4]

    def arrivals(routes: list[str]) -> list[int]:
        trip = trip_of(task)
        out = []
        for text in routes:
            trip.act(text)
            out.append(trip.arrived)
        return out

    bad = ["nonsense"] * 6
    some = ["propose[]", "propose[x]", "go", "propose[]", "?", "??"]
    assert arrivals(bad) == arrivals(some)
    schedule = task.hidden["arrivals"]
    expected, n = [], 0
    for r in range(6):
        n += int(schedule[r] and n < len(task.hidden["pool"]))
        expected.append(n)
    assert arrivals(bad) == expected


def test_generated_tasks_are_prefix_stable() -> None:
    small = NavigationEnvironment.setup(TaskSource(count=3, seed=5)).tasks
    large = NavigationEnvironment.setup(TaskSource(count=5, seed=5)).tasks
    assert [t.model_dump() for t in small] == [t.model_dump() for t in large[:3]]


@pytest.mark.parametrize(
    "text",
    ["", "go to the museum", "propose[Atlantis]", "propose[A", "propose[a\nb]"],
)
async def test_malformed_actions_get_a_clear_observation(text: str) -> None:
    setup = NavigationEnvironment.setup(TaskSource(count=1, seed=0))
    env = setup.factory()
    await env.reset(setup.tasks[0])
    fb = await env.step(ActionProposed(text=text))
    assert not fb.valid and fb.text.startswith("Invalid action:") and fb.needs_reflection


async def test_optimal_proposals_succeed_and_others_score_less() -> None:
    setup = NavigationEnvironment.setup(TaskSource(count=4, seed=0))
    for task in setup.tasks:
        env = setup.factory()
        await env.reset(task)
        optima = optima_of(task)
        for _ in range(8):
            best = optima[env.trip.arrived][0]  # type: ignore[attr-defined]
            fb = await env.step(ActionProposed(text=f"propose[{', '.join(best)}]"))
            if fb.done:
                break
        score = await env.score()
        assert score.success and score.reward == 1.0
    env = setup.factory()
    await env.reset(setup.tasks[0])
    longest = sorted(p.name for p in env.trip.city.places)  # type: ignore[attr-defined]
    await env.step(ActionProposed(text=f"propose[{', '.join(longest)}]"))
    score = await env.score()
    assert not score.success and 0.0 <= score.reward < 1.0
