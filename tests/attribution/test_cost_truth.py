"""A cost truth for the simulator, and cost Shapley intervals checked against it (issue 42).

The truth: the plain-openai example agent's expected completion tokens per
episode for each coalition, from the gateway model's profiles alone: the
expected calls of each module (exact enumeration of the agent's logic,
agentbus.sim.gateway_truth.expected_calls) times the expected completion
tokens of one call of that module on its model (the generic model's own text
generator, Monte Carlo with its standard error stated). Completion tokens
are what a run's cost is made of apart from the prompt, and unlike billed
cost they do not depend on which episodes the prompt cache saw first
(docs/cost.md).

The check: agent.py's real ``solve`` against the simulator's
``gateway_answer`` in process (as tests/examples/test_example_truths.py) on 600 tasks,
every coalition; each coalition's mean completion tokens lies within 4
standard errors of the truth; then 1,000 runs of 20 tasks resampled from
them, each with the paired cost Shapley interval (per_task_bounds, no reward
range), cover the truth's Shapley value 93-97% per slot. An interval cut to
80% of its width fails the same check. About 5 s of CPU.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from agentbus.core.environment import Task
from agentbus.sim import gateway_truth
from agentbus.sim.gateway_model import probability
from agentbus.sim.model import count_tokens
from agentbus.sim.profiles import BUILTIN
from attribution.exact import shapley_matrix
from attribution.variance import per_task_bounds
from tests.examples.test_example_truths import GatewayModelClient, agent, truth

TASKS = 600
RUNS, SIZE = 1000, 20
COALITIONS = [
    tuple(s for i, s in enumerate(truth.SLOTS) if mask >> i & 1) for mask in range(1 << 3)
]


def answer_value(rng: random.Random) -> str:
    return str(rng.randint(2, 10**6))


def true_tokens() -> tuple[np.ndarray, np.ndarray]:
    """(expected completion tokens per episode, its Monte Carlo se) per coalition mask."""
    per_call = {
        (prof, m): gateway_truth.completion_tokens(prof, m, answer_value, draws=4000)
        for prof in ("weak", "strong")
        for m in truth.SLOTS
    }
    mean, se = np.zeros(8), np.zeros(8)
    for mask, coalition in enumerate(COALITIONS):
        prof = {m: "strong" if m in coalition else "weak" for m in truth.SLOTS}
        p = {m: probability(BUILTIN.get(prof[m]), m) for m in truth.SLOTS}
        calls = gateway_truth.expected_calls(truth.logic, p)
        mean[mask] = sum(calls[m] * per_call[(prof[m], m)][0] for m in calls)
        se[mask] = sum((calls[m] * per_call[(prof[m], m)][1]) ** 2 for m in calls) ** 0.5
    return mean, se


class CountingClient(GatewayModelClient):
    tokens = 0

    async def create(self, **kw):  # type: ignore[no-untyped-def]
        reply = await super().create(**kw)
        self.tokens += count_tokens(reply.choices[0].message.content)
        return reply


async def pool() -> np.ndarray:
    """tasks x 8: completion tokens of each task's episode in each coalition."""
    out = np.zeros((TASKS, 8))
    for i in range(TASKS):
        value = random.Random(f"cost-task-{i}").randint(2, 10**6)
        task = Task(id=f"c{i}", env="arith", instruction="q", hidden={"answer": str(value)})
        for mask, coalition in enumerate(COALITIONS):
            client = CountingClient(
                task, {m: "strong" if m in coalition else "weak" for m in truth.SLOTS}
            )
            await agent.solve(client, {"question": f"What is {value - 1} + 1? (#{i})"}, set())
            out[i, mask] = client.tokens
    return out


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import anyio

    mean, se = true_tokens()
    return mean, se, anyio.run(pool)


def test_each_coalitions_mean_tokens_is_the_truth(data: tuple[np.ndarray, ...]) -> None:
    mean, se, tokens = data
    run_se = tokens.std(axis=0, ddof=1) / np.sqrt(TASKS)
    z = (tokens.mean(axis=0) - mean) / np.sqrt(run_se**2 + se**2)
    print("truth", np.round(mean, 1), "pool", np.round(tokens.mean(axis=0), 1), "z", np.round(z, 2))
    assert np.all(np.abs(z) <= 4.0), z


def test_cost_shapley_intervals_cover_the_cost_truth(data: tuple[np.ndarray, ...]) -> None:
    mean, _, tokens = data
    phi_true = shapley_matrix(3) @ mean
    phi_t = tokens @ shapley_matrix(3).T  # tasks x slots: each task's Shapley values
    rows = np.random.default_rng(42).integers(0, TASKS, size=(RUNS, SIZE))
    low, high = per_task_bounds(phi_t[rows], unit_interval=False)
    cover = ((low <= phi_true) & (phi_true <= high)).mean(axis=0)
    centre = (low + high) / 2
    narrow = (centre - 0.4 * (high - low) <= phi_true) & (phi_true <= centre + 0.4 * (high - low))
    print("coverage", np.round(cover, 3), "at 80% width", np.round(narrow.mean(axis=0), 3))
    assert np.all((cover >= 0.93) & (cover <= 0.97)), cover
    assert np.any(narrow.mean(axis=0) < 0.93)
