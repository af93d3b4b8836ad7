"""Known truth through the gateway: the plain-openai example agent on the real path.

One run of the example agent (``examples/plain_openai/agent.py``, in process)
-> gateway -> router -> simulator (generic gateway model) on 160 generated
arithmetic tasks, every coalition of planner/solver/critic (1,280 episodes,
about 20 s). From its per-task outcomes:

* **truth**: each coalition's mean reward is within 3.5 binomial standard
  errors of the exact v(S) (``examples/plain_openai/truth.py``, from the
  agent's logic and the profiles' skills), and each Shapley estimate within
  3.5 of its own standard errors of the exact phi. The truth of a different
  agent (one critic round instead of two) fails the same check, so the check
  can tell;
* **coverage** (replaying per-task outcomes, as tests/attribution/test_interval_coverage.py
  does for the built-in environments): 2,000 runs of 20 tasks drawn from the
  pool, each with the run's own interval estimator; the intervals hold the
  pool's phi in 93-97% of (replication, slot) pairs, and in 93-98.5% per
  slot (BAND: two slots' per-task values are skewed and their intervals
  widen on the long side). Per slot the rate has a binomial se of 0.005, so
  a method that truly covers 90% lands below 93% with probability > 0.99;
  intervals cut to 80% of their width (a deliberately wrong method) fail the
  same per-slot check.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import random
from pathlib import Path
from types import ModuleType

import anyio
import numpy as np
import orjson
import pytest
from rich.console import Console

from agentbus.app.config import build_config
from agentbus.app.evaluate import evaluate
from attribution.estimates import Estimates
from attribution.exact import shapley_values
from attribution.game import Game
from attribution.replicate import Pool, coverage_hits, shapley_by_permutations

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plain_openai"
SLOTS = ("planner", "solver", "critic")
POOL_TASKS = 160

pytestmark = pytest.mark.slow


def _truth_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("plain_truth", EXAMPLE / "truth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tasks(path: Path, n: int) -> None:
    rng = random.Random(3101)
    lines = []
    for i in range(n):
        a, b, c = rng.randint(12, 99), rng.randint(3, 29), rng.randint(2, 60)
        lines.append(json.dumps({"id": f"p{i:04d}", "question": f"What is {a} * {b} + {c}?",
                                 "answer": str(a * b + c)}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Pool:
    tmp = tmp_path_factory.mktemp("gateway_truth")
    _tasks(tmp / "tasks.jsonl", POOL_TASKS)
    config = build_config(
        {
            "agent": "agent:run",
            "env": "external",
            "dataset": str(tmp / "tasks.jsonl"),
            "slots": list(SLOTS),
            "run_dir": str(tmp / "run"),
            "progress": "off",
            "plots": False,
            "trace": False,
            "sim": {"speed": 0, "transport": "inprocess"},
        }
    )
    import sys

    sys.path.insert(0, str(EXAMPLE))
    try:
        anyio.run(evaluate, config, Console(file=io.StringIO()))
    finally:
        sys.path.remove(str(EXAMPLE))
    game = Game(SLOTS)
    masks = np.arange(game.size, dtype=np.int64)
    rewards = np.full((POOL_TASKS, game.size), np.nan)
    row = {f"p{i:04d}": i for i in range(POOL_TASKS)}
    for line in (tmp / "run" / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event.get("type") == "episode.ended":
            assert event["outcome"].get("error") is None, event["outcome"]
            rewards[row[event["task_id"]], game.mask(event["coalition"])] = event["outcome"][
                "reward"
            ]
    assert not np.isnan(rewards).any()
    zeros = np.zeros_like(rewards)
    return Pool("gateway", SLOTS, masks, rewards, zeros, np.arange(POOL_TASKS))


def _z_scores(pool: Pool, values: dict[tuple[str, ...], float]) -> list[float]:
    game = Game(SLOTS)
    out = []
    for mask in range(game.size):
        coalition = tuple(s for i, s in enumerate(SLOTS) if mask >> i & 1)
        truth = values[coalition]
        se = max(np.sqrt(truth * (1 - truth) / pool.tasks), 1e-9)
        out.append((pool.rewards[:, mask].mean() - truth) / se)
    return out


def test_coalition_values_and_phi_match_the_exact_truth(pool: Pool) -> None:
    truth = _truth_module()
    values = truth.values()
    z = _z_scores(pool, values)
    assert max(abs(x) for x in z) < 3.5, z
    one_round = {c: _success_rounds(truth, c, rounds=1) for c in values}
    assert max(abs(x) for x in _z_scores(pool, one_round)) > 3.5  # a wrong truth is caught
    game = Game(SLOTS)
    game.add_many(
        np.tile(pool.masks, pool.tasks),
        [str(t) for t in np.repeat(np.arange(pool.tasks), game.size)],
        pool.rewards.ravel(),
    )
    est = shapley_values(game)
    phi = truth.shapley(values)
    for i, slot in enumerate(SLOTS):
        assert abs(est.values[i] - phi[slot]) < 3.5 * est.se[i], (slot, est.values[i], phi[slot])


def _success_rounds(truth: ModuleType, coalition: tuple[str, ...], rounds: int) -> float:
    from agentbus.sim.gateway_model import probability
    from agentbus.sim.profiles import BUILTIN

    p = {m: probability(BUILTIN.get("strong" if m in coalition else "weak"), m) for m in SLOTS}
    return float(truth.success(p["planner"], p["solver"], p["critic"], rounds=rounds))


#: per-slot band at 20 tasks. The solver's and the critic's per-task Shapley values are
#: binary-valued and skewed (sample skewness +1.45 and +1.39 over the pool), and the
#: interval widens the long-tail side (attribution.variance.skewed_bounds), so they
#: over-cover a little: measured 0.963 / 0.982 / 0.968 (planner / solver / critic);
#: the plain t interval gave 0.951 / 0.932 / 0.928 and 0.874 on the solver at 5 tasks
BAND = (0.93, 0.985)


def _in_band(per_slot: np.ndarray) -> bool:
    return bool(np.all((BAND[0] <= per_slot) & (per_slot <= BAND[1])))


def test_intervals_cover_93_to_97_percent(pool: Pool) -> None:
    truth = shapley_by_permutations(pool.mean_game(), SLOTS)
    hits, _ = coverage_hits(pool, truth, n=20, reps=2000, seed=31)
    per_slot = hits.mean(axis=0)
    print(f"gateway coverage: {hits.mean():.3f} over {hits.size} checks; per slot {per_slot}")
    assert 0.93 <= hits.mean() <= 0.97, per_slot
    assert _in_band(per_slot), per_slot

    def narrow(g: Game) -> Estimates:  # intervals at 80% of their width
        est = shapley_values(g)
        return dataclasses.replace(est, cov=est.cov * 0.64)

    wrong, _ = coverage_hits(pool, truth, n=20, reps=2000, seed=31, estimator=narrow)
    print(f"intervals at 80% of their width: per slot {wrong.mean(axis=0)}")
    assert not _in_band(wrong.mean(axis=0))  # the deliberately wrong method fails the same check
