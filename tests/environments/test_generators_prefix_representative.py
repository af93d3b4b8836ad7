"""Every prefix of a generated run samples the population its truth table describes (issue 42).

A truth table is the mean over 30-task blocks of the generator (its
reference runs). The math generator raised the level every ten tasks, so a
5- or 10-task run held level-1 problems only (all-default 0.357 against the
table's 0.252). Now each 30-task block is a seeded random order of every
(knowledge point, level) of levels 1-3, so any first T tasks are a random
sample of the table's cells and a whole block is the table's mix. The git,
robot, atp and os generators took kinds in turn (``kinds[i mod K]``: a
1-task run always the first kind, a 3-task git run difficulties 1-3, a
5-task os run two file tasks and one process task); now each 30-task block
is a seeded shuffle of that old block (:mod:`environments.task_order`), so
the same holds for them. Navigation, ticket and tools draw each task's kind
from its own random stream.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from environments.atp.generator import KINDS as ATP_KINDS
from environments.atp.generator import generate as atp_tasks
from environments.atp.generator import kind_of as atp_kind
from environments.git.generator import DIFFICULTIES, difficulty_at
from environments.git.generator import generate as git_tasks
from environments.math.generator import KNOWLEDGE_POINTS, RUN_LEVELS, cell, generate
from environments.os.generator import CATEGORIES, category_at
from environments.os.generator import generate as os_tasks
from environments.robot.generator import generate as robot_scenes
from environments.robot.generator import kind_of as robot_kind
from environments.robot.scene import KINDS as ROBOT_KINDS
from environments.task_order import BLOCK, block_kinds


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


#: env -> (kind of task (seed, index), what its generator's tasks say their kind is, the
#: kinds in the old ``i mod K`` order)
ORDERS: dict[
    str, tuple[Callable[[int, int], object], Callable[[int, int], list[object]], tuple[object, ...]]
] = {
    "git": (difficulty_at, lambda n, s: [p.difficulty for p in git_tasks(n, s)], DIFFICULTIES),
    "robot": (robot_kind, lambda n, s: [x.kind for x in robot_scenes(n, s)], ROBOT_KINDS),
    "atp": (
        lambda s, i: atp_kind(s, i).__name__,
        lambda n, s: [p.theorem for p in atp_tasks(n, s)],
        tuple(k.__name__ for k in ATP_KINDS),
    ),
    "os": (category_at, lambda n, s: [t.category for t in os_tasks(n, s)], tuple(dict(CATEGORIES))),
}


@pytest.mark.parametrize("env", sorted(ORDERS))
def test_prefixes_of_the_other_generators_sample_the_tables_block(env: str) -> None:
    """Over 2,000 seeds the first 1, 3, 5 and 10 tasks hold each kind at its block share.

    The share is the old 30-task block's (robot: 8, 8, 7, 7 of 30), what the
    stored table is the mean over. ``i mod K`` fails at once: a 1-task run is
    always the first kind. Bounds: 4.5 binomial standard errors (a prefix
    drawn without replacement varies less).
    """
    kind_of, _, kinds = ORDERS[env]
    seeds = 2000
    firsts = [[kind_of(seed, i) for i in range(10)] for seed in range(seeds)]
    block = Counter(block_kinds(kinds))
    for size in (1, 3, 5, 10):
        counts = Counter(k for first in firsts for k in first[:size])
        n = seeds * size
        for kind, m in block.items():
            p = m / BLOCK
            share = counts[kind] / n
            assert abs(share - p) < 4.5 * (p * (1 - p) / n) ** 0.5, (env, size, kind, share)


@pytest.mark.parametrize("env", sorted(ORDERS))
def test_a_block_is_the_tables_mix_and_the_generator_follows_the_order(env: str) -> None:
    kind_of, made, kinds = ORDERS[env]
    for seed, first in ((0, 0), (5, BLOCK)):  # the first block and a later one: the old ones
        old = Counter(kinds[j % len(kinds)] for j in range(first, first + BLOCK))
        assert Counter(kind_of(seed, i) for i in range(first, first + BLOCK)) == old
    labels = made(6, 3)
    if env == "atp":  # a problem's theorem name tells its kind
        marks = {"linear_system": "_system_", "bounded": "bounded_", "square_bound": "square_",
                 "defined_function": "_at_", "nat_identity": "nat_"}  # fmt: skip
        assert all(marks[str(kind_of(3, i))] in str(labels[i]) for i in range(6)), labels
    else:
        assert labels == [kind_of(3, i) for i in range(6)]
    assert made(6, 3) == made(9, 3)[:6]  # prefix-stable


def test_os_and_atp_prefixes_sample_the_old_blocks_very_tasks() -> None:
    """Not only the kinds: a block is the old block's tasks, reordered.

    Their ids carry no seed (``os-0007``, ``coq-gen-0007``) and the simulator
    draws a task's trap rate from its id, so the table's population pairs each
    old id with its old kind; a prefix must sample those pairs. Old order: the
    first task was always number 0 (atp's first five held trap rate 0.34 on
    average against the block's 0.425).
    """
    for seed in (0, 4):
        assert sorted(t.id for t in os_tasks(30, seed)) == [f"os-{j:04d}" for j in range(30)]
        assert sorted(p.id for p in atp_tasks(30, seed)) == [f"coq-gen-{j:04d}" for j in range(30)]
    seeds = 600  # the first task is each of the 30 equally often: 20 times each
    for first in (Counter(os_tasks(1, s)[0].id for s in range(seeds)),
                  Counter(atp_tasks(1, s)[0].id for s in range(seeds))):  # fmt: skip
        assert len(first) == 30 and max(first.values()) < 20 + 4.5 * 20**0.5, first
