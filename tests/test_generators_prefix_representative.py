"""Every prefix of a generated run samples the population its truth table describes (issue 42).

A truth table is the mean over 30-task blocks of the generator (its
reference runs). The math generator raised the level every ten tasks, so a
5- or 10-task run held level-1 problems only (all-default 0.357 against the
table's 0.252). Now each 30-task block is a seeded random order of every
(knowledge point, level) of levels 1-3, so any first T tasks are a random
sample of the table's cells and a whole block is the table's mix. The
other generators that take kinds in turn (git difficulties 1-5, robot
kinds; atp 5 kinds, os 3 categories by the same ``i mod K``) cycle with a
short period, so their prefixes are balanced within one task per kind
(not changed here: truth compare still notes that runs of another size
than the table's mix kinds differently); navigation, ticket and tools draw
each task's kind from its own random stream.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest

from environments.git.generator import generate as git_tasks
from environments.math.generator import KNOWLEDGE_POINTS, RUN_LEVELS, cell, generate
from environments.robot.generator import generate as robot_scenes


def balanced(labels: Sequence[object], kinds: int) -> bool:
    """Each of ``kinds`` labels appears floor(T / kinds) or ceil(T / kinds) times."""
    counts = Counter(labels)
    t = len(labels)
    low, high = t // kinds, -(-t // kinds)
    missing = kinds - len(counts) if t >= kinds else 0
    return not missing and all(low <= c <= high for c in counts.values())


@pytest.mark.parametrize("size", [1, 5, 10])
def test_math_prefixes_are_random_samples_of_the_tables_cells(size: int) -> None:
    """Over 3,000 seeds the first ``size`` tasks hit every level and point equally often.

    Each cell's share is 1/30 in a representative prefix; the old order gave
    level 1 to every task of a 5- or 10-task run and only five points to a
    5-task run (shares 0 and 1/5). Bounds: 4.5 standard errors.
    """
    seeds = 3000
    cells = Counter(cell(seed, i) for seed in range(seeds) for i in range(size))
    n = seeds * size
    for level in RUN_LEVELS:
        share = sum(c for (_, lv), c in cells.items() if lv == level) / n
        assert abs(share - 1 / 3) < 4.5 * (2 / 9 / n) ** 0.5, (size, level, share)
    for kp in KNOWLEDGE_POINTS:
        share = sum(c for (k, _), c in cells.items() if k == kp) / n
        assert abs(share - 0.1) < 4.5 * (0.09 / n) ** 0.5, (size, kp, share)


def test_a_30_task_math_block_is_the_tables_population_and_generate_follows_it() -> None:
    for seed in (0, 3):
        block = Counter(cell(seed, i) for i in range(30))
        assert set(block) == {(kp, lv) for kp in KNOWLEDGE_POINTS for lv in RUN_LEVELS}
        assert set(block.values()) == {1}
    tasks = generate(8, seed=3)
    got = [(t.hidden["knowledge_point"], t.data["level"]) for t in tasks]
    assert got == [cell(3, i) for i in range(8)]


@pytest.mark.parametrize("size", [5, 10])
def test_git_and_robot_prefixes_are_balanced(size: int) -> None:
    assert balanced([p.difficulty for p in git_tasks(size, seed=1)], 5)
    kinds = [s.kind for s in robot_scenes(size, seed=1)]
    assert balanced(kinds, len(set(s.kind for s in robot_scenes(20, seed=1))))
