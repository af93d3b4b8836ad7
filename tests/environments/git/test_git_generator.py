"""The seeded puzzle generator: solvable by construction, reproducible, graded."""

from __future__ import annotations

from collections import Counter

from environments.git.compare import matches
from environments.git.generator import generate
from environments.git.tree import compact, dump_repo


def test_every_generated_puzzle_is_solved_by_its_recorded_solution() -> None:
    for seed in range(12):
        for puzzle in generate(25, seed):
            assert puzzle.solved_by(puzzle.solution), (puzzle.id, puzzle.solution)
            assert not matches(puzzle.start, puzzle.goal), puzzle.id
            # every commit the solution makes is visible in the goal
            made = set(puzzle.goal.local.commits) - set(puzzle.start.local.commits)
            assert made <= puzzle.goal.local.reachable(), puzzle.id


def test_generation_is_reproducible_from_the_seed() -> None:
    a = [(p.id, p.solution, dump_repo(p.goal)) for p in generate(15, 7)]
    b = [(p.id, p.solution, dump_repo(p.goal)) for p in generate(15, 7)]
    c = [(p.id, p.solution, dump_repo(p.goal)) for p in generate(15, 8)]
    assert a == b and a != c


def test_difficulty_grades_length_and_commands() -> None:
    puzzles = generate(100, 3)
    by_level: dict[int, list[int]] = {}
    used: dict[int, Counter[str]] = {}
    for p in puzzles:
        by_level.setdefault(p.difficulty, []).append(len(p.solution))
        used.setdefault(p.difficulty, Counter()).update(c.split()[1] for c in p.solution)
    assert sorted(by_level) == [1, 2, 3, 4, 5]
    assert max(by_level[1]) <= 2 and min(by_level[4]) >= 3
    mean = {d: sum(v) / len(v) for d, v in by_level.items()}
    assert mean[1] < mean[3] < mean[4]
    assert set(used[1]) <= {"commit", "branch", "checkout"}
    assert {"rebase", "cherry-pick"} & set(used[3])
    assert {"fetch", "pull", "push"} & set(used[5])
    assert all(p.start.origin is not None for p in puzzles if p.difficulty == 5)
    # distinct puzzles, not one repeated
    assert len({str(compact(p.goal)) + str(p.solution) for p in puzzles}) > 90
