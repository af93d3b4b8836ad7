"""Real per-task outcomes of the simulator, stored for the interval coverage tests.

The coverage tests (tests/attribution/test_interval_coverage.py) need thousands of
replications at 5-30 tasks; running the pipeline that often is too slow for
CI. This script plays what the reference computation of the truth tables
plays (agentbus.sim.truth.reference: every coalition of the praf agent on
every task of fresh generator blocks, the simulator in process at
temperature 0, sim:weak as default and sim:strong as test model), and keeps
per task and coalition the reward and the agent's cost (each slot's tokens
at the built-in prices, every call counted, also those the cache shared:
the figure results.json's cost section uses). The tests then draw tasks
from this pool: each draw is a task the generator really made and the
simulator really played.

    python benchmarks/per_task_outcomes.py --env math --blocks 40

writes tests/data/per_task/<env>.npz (rewards and costs, tasks x coalitions,
coalition keys in the reference order, the block seed of each task).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

# This file sits beside a folder named like packages it imports; keep its folder off the path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import anyio  # noqa: E402
import numpy as np  # noqa: E402

from agentbus import registry  # noqa: E402
from agentbus.core.environment import EnvSetup  # noqa: E402
from agentbus.core.logs import configure  # noqa: E402
from agentbus.core.outcome import Outcome  # noqa: E402
from agentbus.core.record import price_usage  # noqa: E402
from agentbus.executors.runtime import Runtime  # noqa: E402
from agentbus.llm.config import EndpointLimits, LLMConfig  # noqa: E402
from agentbus.llm.prices import PriceTable  # noqa: E402
from agentbus.llm.router import LLMRouter  # noqa: E402
from agentbus.sim.config import SimConfig  # noqa: E402
from agentbus.sim.service import sim_service  # noqa: E402
from agentbus.sim.truth.reference import CONCURRENCY, Setting, _specs, coalition_keys  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "per_task"


async def play(setting: Setting, seeds: list[int]) -> dict[str, Any]:
    _, keys = coalition_keys(setting.agent)
    column = {k: i for i, k in enumerate(keys)}
    prices = PriceTable()
    env_cls = registry.get("environments", setting.env)
    experts = [setting.env] if setting.env in registry.names("experts") else []
    sim_config = SimConfig(transport="inprocess", speed=0.0, experts=experts, prefix_cache_tokens=0)
    llm_config = LLMConfig(
        limits=EndpointLimits(max_concurrency=4096, max_retries=0),
        cache="on",
        sim_transport="inprocess",
    )
    rows: dict[tuple[int, str], list[list[float]]] = {}
    async with sim_service(sim_config) as sim:
        for seed in seeds:
            setup: EnvSetup = env_cls.setup(setting.source(seed))
            sim.model.add_tasks(setting.env, setup.tasks)
            async with LLMRouter(llm_config, sim=sim) as router:

                async def on_outcome(spec: Any, result: Any, seed: int = seed) -> None:
                    outcome: Outcome = getattr(result, "outcome", result)
                    if not outcome.counts_for_value:
                        raise RuntimeError(f"infrastructure failure in process: {spec.episode_id}")
                    # the reference specs carry no assignment, so name each slot's model here
                    key = spec.metadata["coalition_key"]
                    members = set(key.split("+")) if key else set()
                    named = {
                        slot: u.model_copy(
                            update={"model": setting.test if slot in members else setting.default}
                        )
                        for slot, u in outcome.usage.items()
                    }
                    usage = price_usage(named, prices)
                    cost = sum(u.cost_usd for u in usage.values() if u.cost_usd is not None)
                    row = rows.setdefault(
                        (seed, spec.task.id), [[np.nan] * len(keys), [np.nan] * len(keys)]
                    )
                    j = column[key]
                    row[0][j] = float(outcome.reward)
                    row[1][j] = float(cost)

                runtime = Runtime(max_concurrency=CONCURRENCY)
                await runtime.run(_specs(setting, setup, router), on_outcome)
    order = sorted(rows)
    return {
        "keys": np.array(keys),
        "seeds": np.array([s for s, _ in order], dtype=np.int64),
        "rewards": np.array([rows[k][0] for k in order], dtype=np.float32),
        "costs": np.array([rows[k][1] for k in order], dtype=np.float32),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", required=True)
    parser.add_argument("--blocks", type=int, default=40)
    parser.add_argument("--first-seed", type=int, default=800_000)
    args = parser.parse_args()
    configure("error")
    setting = Setting(args.env, "sim:weak", "sim:strong")
    seeds = list(range(args.first_seed, args.first_seed + args.blocks))
    t0 = time.perf_counter()
    data = anyio.run(play, setting, seeds, backend="asyncio")
    if np.isnan(data["rewards"]).any():
        raise RuntimeError("some (task, coalition) has no outcome")
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{args.env}.npz"
    np.savez_compressed(path, **data)
    print(
        f"{args.env}: {len(data['seeds'])} tasks x {len(data['keys'])} coalitions in "
        f"{time.perf_counter() - t0:.0f} s -> {path} ({path.stat().st_size // 1024} KiB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
