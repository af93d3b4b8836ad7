"""``--pareto``'s front is estimated without the bias of choosing it, and its intervals cover.

The truth of a mixed assignment is known here: the test models are
sim:strong and sim:strong-action, and sim:strong-action is sim:weak except
in the action slot (agentbus/sim/truth/derived.py: its coalition S *is*
the sim:strong coalition S n {action}). So any assignment of sim:weak,
sim:strong and sim:strong-action to the four slots plays exactly like one
coalition of the sim:weak/sim:strong game: the slots on sim:strong, plus
action when action is on sim:strong-action. Its true accuracy is that
coalition's mean over the per-task pool (tests/data/per_task, real
simulator outcomes; tests/attribution/test_interval_coverage.py says why drawing tasks
from it is a replication).

Each replication draws 30 tasks, builds the records the coalition runs of
both test models would give, and lets :func:`attribution.pareto.predict`
predict all 81 assignments, choose the front and the most accurate point on
a third of the tasks and estimate them on the rest. Checked over those
points (measured and predicted alike): the mean of predicted minus true
accuracy within 0.02 (0.04 for the most accurate point alone), and their
95% intervals holding the truth 93-97% of the time. The same points chosen
and estimated on the same tasks (``split=False``, what ``--pareto`` did
before) are biased high by more than 0.02, so the bias bound fails them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agentbus.core.outcome import Outcome, SlotUsage
from agentbus.core.record import EpisodeRecord
from attribution.game import Game
from attribution.pareto import Point, predict
from attribution.replicate import Pool, load_pool

POOLS = Path(__file__).parents[1] / "data" / "per_task"
TASKS = 30
#: replications of the method checked, and of the deliberately wrong one
REPS = 150
WRONG_REPS = 40
WEAK, STRONG, ACTION = "sim:weak", "sim:strong", "sim:strong-action"


def equivalent(assignment: dict[str, str]) -> str:
    """The sim:weak/sim:strong coalition an assignment plays like (results key)."""
    members = [s for s, m in assignment.items() if m == STRONG or (m == ACTION and s == "action")]
    return "+".join(members)


def records(pool: Pool, rows: np.ndarray) -> list[EpisodeRecord]:
    game = Game(pool.slots)
    action = game.mask(["action"])
    column = {int(m): j for j, m in enumerate(pool.masks)}
    out = []
    for t, row in enumerate(rows):
        for model in (STRONG, ACTION):
            for mask in pool.masks:
                plays = int(mask) if model == STRONG else int(mask) & action
                j = column[plays]
                members = tuple(s for s in pool.slots if s in game.members(int(mask)))
                out.append(
                    EpisodeRecord(
                        episode_id=f"{model}|{game.key(int(mask)) or '-'}|t{t}|r0",
                        task_id=f"t{t}",
                        test_model=model,
                        default_model=WEAK,
                        coalition=members,
                        slots=pool.slots,
                        outcome=Outcome(
                            reward=float(pool.rewards[row, j]),
                            usage={
                                "action": SlotUsage(model=model, cost_usd=float(pool.costs[row, j]))
                            },
                        ),
                    )
                )
    return out


def checked(points: list[Point]) -> list[Point]:
    """The points the front chose, and the most accurate point (last)."""
    best = [p for p in points if p.most_accurate]
    return [p for p in points if p.on_front and not p.most_accurate] + best


def replicate(
    pool: Pool, rng: np.random.Generator, split: bool, reps: int
) -> dict[str, list[float]]:
    """Bias, coverage and width over the checked points of ``reps`` replications."""
    truth = pool.mean_game()
    out: dict[str, list[float]] = {"bias": [], "cover": [], "width": [], "best": [], "pred": []}
    for _ in range(reps):
        rows = rng.integers(0, pool.tasks, size=TASKS)
        points = predict(records(pool, rows), pool.slots, WEAK, [STRONG, ACTION], split=split)
        for p in checked(points):
            v = truth[equivalent(p.assignment)]
            out["bias"].append(p.acc["mean"] - v)
            out["cover"].append(float(p.acc["ci_low"] <= v <= p.acc["ci_high"]))
            out["width"].append(p.acc["ci_high"] - p.acc["ci_low"])
            out["pred"].append(float(not p.measured))
        out["best"].append(out["bias"][-1])
        for p in points:  # never a zero-width accuracy interval
            assert p.acc["ci_high"] > p.acc["ci_low"], p.acc
    return out


def summary(name: str, m: dict[str, list[float]]) -> str:
    width, pred = np.asarray(m["width"]), np.asarray(m["pred"], dtype=bool)
    return (
        f"{name}: {len(m['bias'])} points, bias {np.mean(m['bias']):+.3f} "
        f"(most accurate {np.mean(m['best']):+.3f}), coverage {np.mean(m['cover']):.3f}, "
        f"mean width {width.mean():.3f} (predicted {width[pred].mean():.3f}, "
        f"measured {width[~pred].mean():.3f})"
    )


def holds(m: dict[str, list[float]]) -> bool:
    """The bounds: mean bias within 0.02, the most accurate point's within 0.04, coverage 93-97%."""
    return (
        abs(float(np.mean(m["bias"]))) <= 0.02
        and abs(float(np.mean(m["best"]))) <= 0.04
        and 0.93 <= float(np.mean(m["cover"])) <= 0.97
    )


@pytest.mark.slow
def test_front_unbiased_and_covers_after_selection() -> None:
    pool = load_pool(POOLS / "tools.npz")
    held = replicate(pool, np.random.default_rng(11), split=True, reps=REPS)
    same = replicate(pool, np.random.default_rng(11), split=False, reps=WRONG_REPS)
    print(summary("held-out", held))
    print(summary("same tasks", same))
    assert holds(held), summary("held-out", held)
    # the deliberately wrong method: choose and estimate on the same tasks
    assert not holds(same), summary("same tasks", same)
    assert np.mean(same["bias"]) > np.mean(held["bias"])
