"""A seeded generator of algebra and geometry problems with exact answers.

Ten knowledge points x five levels. Each problem knows its worked solution as
calculator inputs (what a perfect agent would type, in order), the method a
good plan names, a plausible wrong method with its own calculator inputs and
wrong answer (what a mistaken agent would do), and its exact answer computed
with sympy. Higher levels need more steps and bigger numbers, so a perfect
agent solves every problem in at most four rounds and a sloppy one can run
out of the ten.

The knowledge points' generators live in :mod:`environments.math.algebra` and
:mod:`environments.math.geometry`; this module orders them into seeded runs.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import sympy

from agentbus import Task
from environments.math.algebra import (
    complex_numbers,
    linear,
    logarithms,
    quadratic,
    sequences,
    systems,
)
from environments.math.geometry import areas, circles, pythagorean, volumes
from environments.math.problem import Problem

LEVELS = (1, 2, 3, 4, 5)
#: the levels a run draws from by default: those the truth table describes. Its
#: reference runs are 30-task blocks, and the earlier order (knowledge points in
#: turn, the level rising every ten tasks) filled 30 tasks with levels 1-3 only,
#: so that is the population the table's values are the mean over.
RUN_LEVELS = (1, 2, 3)


GENERATORS: dict[str, Callable[[random.Random, int], Problem]] = {
    "Linear Equations": linear,
    "Systems of Linear Equations": systems,
    "Quadratic Equations": quadratic,
    "Exponents and Logarithms": logarithms,
    "Sequences and Series": sequences,
    "Complex Numbers": complex_numbers,
    "Pythagorean Theorem": pythagorean,
    "Circles": circles,
    "Area of Triangles and Polygons": areas,
    "Volume and Surface Area": volumes,
}
KNOWLEDGE_POINTS: tuple[str, ...] = tuple(GENERATORS)


def to_task(problem: Problem, task_id: str) -> Task:
    answer = sympy.latex(problem.answer)
    wrong = sympy.latex(problem.wrong_answer)
    if wrong == answer:
        wrong = sympy.latex(problem.answer + 1)
    return Task(
        id=task_id,
        env="math",
        instruction=problem.text,
        data={"level": problem.level, "source": "generator"},
        hidden={
            "answer": answer,
            "knowledge_point": problem.knowledge_point,
            "method": problem.method,
            "keywords": list(problem.keywords),
            "steps": problem.steps,
            "wrong_method": problem.wrong_method,
            "wrong_steps": problem.wrong_steps,
            "wrong_answer": wrong,
        },
    )


def cell(seed: int, index: int, levels: tuple[int, ...] = RUN_LEVELS) -> tuple[str, int]:
    """(knowledge point, level) of task ``index``: a seeded shuffle of every cell per block.

    The tasks come in blocks of ``10 L`` (30 for the run levels), each block a
    seeded random order of every (knowledge point, level) once. So any first
    T tasks are a random sample of the cells without replacement, whatever
    T (a 5-task run is as likely to hold a level-3 circle as a level-1
    linear equation), and a whole block is exactly the table's mix. The
    earlier order (points in turn, the level rising every ten tasks) gave
    every 5- or 10-task run level-1 problems only, and a 5-task run the
    same five points (all-default pass rate 0.357 on tasks 0-4 against the
    table's 0.252). The order depends on the block alone, never on
    ``count``, so a longer run keeps the first tasks (prefix-stable).
    """
    cells = [(kp, lv) for lv in levels for kp in KNOWLEDGE_POINTS]
    block, at = divmod(index, len(cells))
    random.Random(f"math-order:{seed}:{block}").shuffle(cells)
    return cells[at]


def generate(count: int = 50, seed: int = 0, levels: tuple[int, ...] = RUN_LEVELS) -> list[Task]:
    """``count`` problems with unique texts, in :func:`cell`'s order (every prefix representative).

    Each problem's numbers come from its own stream (seed, index).
    """
    tasks: list[Task] = []
    seen: set[str] = set()
    for i in range(count):
        kp, level = cell(seed, i, levels)
        for attempt in range(200):
            rng = random.Random(f"math:{seed}:{i}:{attempt}")
            problem = GENERATORS[kp](rng, level)
            if problem.text not in seen:
                break
        else:
            problem.text += f" (problem {i + 1})"
        seen.add(problem.text)
        problem.knowledge_point, problem.level = kp, level
        tasks.append(to_task(problem, f"math-gen-{seed}-{i:04d}"))
    return tasks


__all__ = ["GENERATORS", "KNOWLEDGE_POINTS", "LEVELS", "RUN_LEVELS", "cell", "generate"]
