"""The live attribution service fed through a real EventHub."""

from __future__ import annotations

from typing import Any

import anyio
import numpy as np
import pytest

from agentbus.core.events import ATTRIBUTION_SNAPSHOT, EPISODE_ENDED, EventHub
from attribution.allocation import planned_episodes
from attribution.exact import shapley_matrix
from attribution.multi import best_assignment, consistency_rate, table_correlation
from attribution.service import AttributionService
from attribution.synthetic import paper_like_game

SLOTS = ["planning", "reasoning", "action", "reflection"]


def payload(
    i: int,
    mask: int,
    reward: float,
    *,
    model: str = "sim:strong",
    task: str | None = None,
    **outcome: Any,
) -> dict[str, Any]:
    return {
        "episode_id": f"e{model}-{i}",
        "task_id": task if task is not None else f"t{i // 16}",
        "test_model": model,
        "default_model": "sim:weak",
        "coalition": [s for k, s in enumerate(SLOTS) if mask >> k & 1],
        "slots": SLOTS,
        "repeat": 0,
        "outcome": {"reward": reward, "success": reward > 0.5, **outcome},
    }


async def test_service_updates_and_publishes_snapshots_through_the_hub() -> None:
    hub = EventHub()
    service = AttributionService(hub, SLOTS, snapshot_interval_s=0.05, target_halfwidth=0.5)
    snapshots = hub.subscribe([ATTRIBUTION_SNAPSHOT], policy="drop", maxsize=10_000)
    bg = paper_like_game(4)
    rng = np.random.default_rng(0)
    async with anyio.create_task_group() as tg:
        await tg.start(service.run)
        i = 0
        for _ in range(30):  # 30 complete task blocks
            for m in range(16):
                r = float(rng.random() < bg.v[m])
                await hub.publish(EPISODE_ENDED, payload(i, m, r))
                i += 1
        # infrastructure failures are counted apart and never enter v(S)
        await hub.publish(EPISODE_ENDED, payload(i, 15, 0.0, error_kind="infra", error="down"))
        # the same cell again (a later attempt): it replaces the first, counts once
        await hub.publish(EPISODE_ENDED, {**payload(0, 0, 1.0), "attempt": 2})
        # step_limit is the agent's own failure: it counts
        await hub.publish(EPISODE_ENDED, payload(i + 1, 0, 0.0, error_kind="step_limit"))
        with anyio.fail_after(5):
            while service.collector.episodes < 30 * 16 + 1:  # noqa: ASYNC110
                await anyio.sleep(0.01)
        await anyio.sleep(0.12)
        hub.close()
    assert service.everything.failures == {"sim:strong": 1}
    assert service.everything.failure_kinds == {"infra": 1}
    game = service.collector.games["sim:strong"]
    assert game.episodes == 30 * 16 + 1
    assert game.counts[0] == 31
    # the later attempt's reward (1.0) replaced the first one's
    first = payload(0, 0, 0.0)["episode_id"]
    assert service.everything.book.counted(first).reward == 1.0  # type: ignore[union-attr]
    assert service.snapshots_published >= 1
    last = None
    while len(snapshots.mailbox):
        last = await snapshots.get()
    assert last is not None
    snap = last.data
    model = snap["models"]["sim:strong"]
    assert set(model["shapley"]) == set(SLOTS)
    assert model["coalitions"][""]["n"] == 31
    assert model["failures"] == 1
    assert model["se_method"] in ("paired", "covariance")
    total = sum(row["value"] for row in model["shapley"].values())
    assert total == pytest.approx(model["acc_test"] - model["acc_default"])
    assert snap["episodes"] == 30 * 16 + 1
    assert "done" in snap


async def test_observe_replay_suggest_and_done() -> None:
    hub = EventHub()
    service = AttributionService(
        hub, SLOTS, adaptive=True, target_halfwidth=0.2, test_models=["sim:strong"]
    )
    # the anytime-valid intervals are tuned, before any data, for the planned run size
    assert service.horizon == pytest.approx(planned_episodes(4, 0.2))
    first = service.suggest()
    assert first.test_model == "sim:strong" and first.mode == "block"
    assert {k for k, _ in first.coalitions} == {
        service.collector.games["sim:strong"].key(m) for m in range(16)
    }
    # heaviest Shapley weights (empty and full coalitions) get the most repeats
    reps = dict(first.coalitions)
    assert reps[""] >= reps["planning+reasoning"]
    assert not service.done()
    bg = paper_like_game(4)
    rng = np.random.default_rng(1)
    i = block = 0
    while not service.done() and i < 60_000:
        plan = service.suggest()
        block += 1  # a block runs on one fresh task
        for key, k in plan.coalitions:
            mask = service.collector.games["sim:strong"].mask_of_key(key)
            for _ in range(k):
                r = float(rng.random() < bg.v[mask])
                assert service.observe(payload(i, mask, r, task=f"b{block}"))
                i += 1
    assert service.done()
    est = service.estimates("sim:strong")
    assert est is not None
    # the stop rule: 20 tasks or more, then every fixed-sample interval under the target
    assert est.units >= 20 and service.collector.games["sim:strong"].n_tasks >= 20
    assert np.all(est.halfwidths() <= 0.2)
    assert service.snapshot()["done"] is True


async def test_greedy_single_mode_without_task_correlation() -> None:
    hub = EventHub()
    service = AttributionService(hub, SLOTS, test_models=["m"])
    rng = np.random.default_rng(2)
    bg = paper_like_game(4)
    for i in range(16 * 20):  # every episode on its own task: no pairing possible
        m = i % 16
        service.observe(payload(i, m, float(rng.random() < bg.v[m]), model="m", task=f"x{i}"))
    plan = service.suggest("m")
    assert plan.mode == "single" and plan.episodes == 1
    game = service.collector.games["m"]
    # the greedy rule favours the heavily weighted coalitions (empty / full)
    c2 = (shapley_matrix(4) ** 2).sum(axis=0)
    assert c2[game.mask_of_key(plan.coalitions[0][0])] >= np.median(c2)


def test_multi_model_tables() -> None:
    a = {"m1": {"p": 0.1, "r": 0.2, "a": 0.3}, "m2": {"p": 0.2, "r": 0.1, "a": 0.35}}
    b = {"m1": {"p": 0.12, "r": 0.25, "a": 0.2}, "m2": {"p": 0.22, "r": 0.05, "a": 0.3}}
    assert best_assignment(a, ["p", "r", "a"], "d") == {"a": "m2", "p": "m2", "r": "m1"}
    # a slot where no test model adds anything stays on the default model
    worse = {"m1": {"p": -0.1, "r": 0.2}, "m2": {"p": 0.0, "r": 0.1}}
    assert best_assignment(worse, ["p", "r"], "d") == {"p": "d", "r": "m1"}
    assert consistency_rate(a, b) == 1.0
    b["m1"]["a"] = 0.4
    assert consistency_rate(a, b) == pytest.approx(2 / 3)
    corr = table_correlation(a, b)
    assert -1 <= corr["pearson"] <= 1 and -1 <= corr["spearman"] <= 1
    assert table_correlation(a, a)["pearson"] == pytest.approx(1.0)


async def test_many_slots_switch_to_the_stratified_estimator() -> None:
    slots = [f"m{i}" for i in range(12)]
    service = AttributionService(EventHub(), slots, test_models=["big"], seed=3)
    assert not service.exact
    # additive game: phi_i = 0.3 * i / 66
    rng = np.random.default_rng(4)
    for i in range(3000):
        plan = service.suggest("big")
        assert plan.mode == "single"
        key = plan.coalitions[0][0]
        members = [s for s in key.split("+") if s]
        p = 0.3 + sum(0.3 * slots.index(s) / 66 for s in members)
        service.observe(
            {
                "episode_id": str(i),
                "task_id": f"t{i}",
                "test_model": "big",
                "coalition": members,
                "slots": slots,
                "outcome": {"reward": float(rng.random() < p)},
            }
        )
    est = service.estimates("big")
    assert est is not None and est.method == "stratified"
    assert np.all(np.abs(est.values - 0.3 * np.arange(12) / 66) < 5 * est.se)
    assert abs(est.values.sum() - 0.3) < 4 * np.sqrt(est.cov.sum())  # not exactly efficient
    snap = service.snapshot()["models"]["big"]
    assert snap["se_method"] == "stratified" and set(snap["shapley"]) == set(slots)
