"""What an adaptive run should run next on an exact game: a task block or one coalition.

The :class:`~attribution.service.AttributionService` decides which test model
and which estimator; this module holds the allocation rule for an exact game
(every coalition estimable), so the rule can be read and tested on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from attribution.allocation import (
    BLOCK_RHO,
    MAX_BLOCK,
    block_repeats,
    neyman_scores,
    open_slots,
    within_task_correlation,
)
from attribution.exact import shapley_matrix
from attribution.game import Game


@dataclass(frozen=True, slots=True)
class Suggestion:
    """What to run next for one test model.

    ``mode`` is ``block`` (run every listed coalition on one fresh task, with
    the given repeats), ``single`` (one episode of the one coalition, on
    any task) or ``design`` (a fresh task with the coalitions a per-task
    sampled estimator draws for it). Coalitions are results-file keys ('' = all default).
    """

    test_model: str
    mode: str
    coalitions: list[tuple[str, int]] = field(default_factory=list)
    reason: str = ""

    @property
    def episodes(self) -> int:
        return sum(k for _, k in self.coalitions)


def exact_suggestion(
    model: str,
    game: Game,
    hw: np.ndarray | None,
    target: float,
    costs: Mapping[str, float],
) -> Suggestion:
    """A task block while tasks correlate, else the coalition the greedy Neyman rule picks.

    Blocks (every coalition on one fresh task, Neyman repeats for the heavy
    ones) are used while the estimated within-task correlation exceeds
    ``BLOCK_RHO`` (and before it can be estimated), for games of at most
    ``MAX_BLOCK`` coalitions. Otherwise the coalition with the largest
    variance reduction per cost wins, counting only slots whose halfwidth
    ``hw`` is still wider than ``target``.
    """
    coef = shapley_matrix(game.n)
    weights = open_slots(hw, target) if hw is not None else None
    rho = within_task_correlation(game) if game.n_tasks >= 10 else 1.0
    if game.size <= MAX_BLOCK and rho >= BLOCK_RHO:
        plan = block_repeats(game, coef, slot_weights=weights)
        items = [(game.key(m), k) for m, k in plan.repeats.items()]
        return Suggestion(model, "block", items, f"within-task correlation {rho:.2f}")
    cost = None
    if costs:
        cost = np.array([costs.get(game.key(m), 1.0) for m in range(game.size)])
    score = neyman_scores(game, coef, slot_weights=weights, cost=cost)
    best = int(np.argmax(score))
    reason = "missing coalition" if game.counts[best] == 0 else "greedy Neyman"
    return Suggestion(model, "single", [(game.key(best), 1)], reason)
