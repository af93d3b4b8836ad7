"""A built-in environment's cost truth, and cost Shapley intervals checked against it (issue 42).

The math cost table (``python -m agentbus.truth_cost show --env math``) is the
reward tables' Monte Carlo read for tokens: expected prompt and completion
tokens per episode per coalition, and their list cost with no prompt-cache
discount. Three checks, about 13 s of CPU with start-up:

* a real run (``evaluate``, the command line's path) plays the reference
  computation's episodes token for token: the table describes what runs use;
* a fresh pool of 120 tasks in the sub-game reasoning x action (the other
  slots on the default model) agrees with the table, every coalition and
  quantity within 4 standard errors;
* 1,000 runs of 10 tasks resampled from that pool, each with the run's cost
  Shapley interval (``shapley_values`` on a game without a range, as
  attribution.cost builds it), cover the table's Shapley value 93-98% per
  slot and quantity; intervals cut to 80% of their width do not.
  benchmarks/cost_truth_coverage.py measures the same on fresh whole blocks.
"""

from __future__ import annotations

import io

import anyio
import numpy as np
import orjson
import pytest
from rich.console import Console

from agentbus.app.config import build_config
from agentbus.app.evaluate import evaluate
from agentbus.app.truth_cost import games, main, true_shapley
from agentbus.llm.prices import PriceTable
from agentbus.sim.truth import cost as costs
from agentbus.sim.truth.cost import QUANTITIES
from agentbus.sim.truth.reference import Setting, run_seeds
from attribution.exact import shapley_matrix, shapley_values
from attribution.variance import per_task_bounds

SUB = ("reasoning", "action")
KEYS = ("", "reasoning", "action", "reasoning+action")
POOL_SEEDS = range(700_000, 700_004)  # 4 blocks of 30: apart from the table's seeds
RUNS, SIZE = 1000, 10


@pytest.fixture(scope="module")
def table() -> costs.CostTable:
    return costs.load("math", "sim:weak", "sim:strong")


def test_a_run_plays_the_reference_episodes_token_for_token(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = build_config(
        {
            "tasks": 2,
            "seed": 11,
            "run_dir": str(tmp_path / "run"),
            "progress": "off",
            "plots": False,
            "trace": False,
            "sim": {"speed": 0, "transport": "inprocess"},
        }
    )
    anyio.run(evaluate, config, Console(file=io.StringIO()))
    played = {}
    for line in (tmp_path / "run" / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event.get("type") == "episode.ended":
            usage = event["outcome"]["usage"]
            key = "+".join(event["coalition"])
            played[(event["task_id"], key)] = {
                s: (u["input_tokens"], u["output_tokens"]) for s, u in usage.items()
            }
    sums = run_seeds(
        Setting(env="math", default="sim:weak", test="sim:strong", per_seed=2), [11], True
    )
    reference = {
        (task, key): use
        for (_, task), per in (sums.usage or {}).items()
        for key, use in per.items()
    }
    assert len(played) == 32 and played == reference
    assert main(["compare", str(tmp_path / "run")]) == 0  # the run's intervals beside the truth
    assert main(["compare", str(tmp_path / "nowhere")]) == 2  # one line, exit 2


@pytest.fixture(scope="module")
def pool() -> dict[str, np.ndarray]:
    """quantity -> tasks x 4 (masks over SUB) of per-episode use, 120 fresh tasks."""
    setting = Setting(env="math", default="sim:weak", test="sim:strong", coalitions=KEYS)
    sums = run_seeds(setting, list(POOL_SEEDS), per_task=True)
    prices = PriceTable()
    tasks = sorted(sums.usage or {})
    out = {q: np.zeros((len(tasks), 4)) for q in QUANTITIES}
    for row, task in enumerate(tasks):
        for key, usage in (sums.usage or {})[task].items():
            members = set(key.split("+")) if key else set()
            mask = sum(1 << i for i, s in enumerate(SUB) if s in members)
            for q, x in zip(
                QUANTITIES, costs.episode_use(usage, members, setting, prices), strict=True
            ):
                out[q][row, mask] = x
    return out


def test_a_fresh_pool_agrees_with_the_table(
    table: costs.CostTable, pool: dict[str, np.ndarray]
) -> None:
    for q in QUANTITIES:
        truth = np.asarray(table.vector(q, SUB))
        se_t = np.sqrt(np.diag(table.covariance_matrix(q, SUB)))
        data = pool[q]
        se_p = data.std(axis=0, ddof=1) / np.sqrt(len(data))
        z = (data.mean(axis=0) - truth) / np.sqrt(se_p**2 + se_t**2)
        print(
            q,
            "table",
            np.round(truth, 5),
            "pool",
            np.round(data.mean(axis=0), 5),
            "z",
            np.round(z, 2),
        )
        assert np.all(np.abs(z) <= 4.0), (q, z)


def test_cost_shapley_intervals_cover_the_table(
    table: costs.CostTable, pool: dict[str, np.ndarray]
) -> None:
    rows = np.random.default_rng(4205).integers(0, len(pool["usd"]), size=(RUNS, SIZE))
    for q in QUANTITIES:
        truth, _ = true_shapley(table, q, SUB)
        phi_t = pool[q] @ shapley_matrix(len(SUB)).T  # each task's Shapley values
        low, high = per_task_bounds(phi_t[rows], unit_interval=False)
        # the batched bounds are the run's own interval (one replication rebuilt as a game)
        uses = [
            (f"t{j}", tuple(s for i, s in enumerate(SUB) if mask >> i & 1), (x, x, x))
            for j, r in enumerate(rows[0])
            for mask, x in enumerate(pool[q][r])
        ]
        est = shapley_values(games(uses, SUB)["usd"])
        assert np.allclose(est.ci_low, low[0]) and np.allclose(est.ci_high, high[0])
        cover = ((low <= truth) & (truth <= high)).mean(axis=0)
        centre, half = (low + high) / 2, 0.4 * (high - low)
        cut = ((centre - half <= truth) & (truth <= centre + half)).mean(axis=0)
        print(q, "coverage", np.round(cover, 3), "at 80% width", np.round(cut, 3))
        assert np.all((cover >= 0.93) & (cover <= 0.98)), (q, cover)
        assert np.any(cut < 0.93), (q, cut)
