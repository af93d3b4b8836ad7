"""Puzzles as :class:`~agentbus.core.environment.Task` objects, and back.

A task carries everything needed to replay it (start and goal in
learnGitBranching's JSON, the comparison rule, disabled commands, the round
budget) in ``data``, and the recorded solution in ``hidden``, so environments
and the simulator's expert rebuild the puzzle from the task alone and share
nothing. The instruction names the puzzle and shows the goal, which makes it
unique per task (the expert finds its task by it).
"""

from __future__ import annotations

import orjson

from agentbus import Task
from environments.git.levels import Puzzle
from environments.git.tree import compact, dump_repo, load_repo

#: the most rounds any git task gets (the episode's own limit may be lower)
MAX_BUDGET = 15


def budget(solution_length: int) -> int:
    """Rounds allowed for a puzzle: the solution plus five to spare, at least six."""
    return min(MAX_BUDGET, max(6, solution_length + 5))


def to_json(data: object) -> str:
    return orjson.dumps(data).decode()


def puzzle_task(puzzle: Puzzle) -> Task:
    goal = to_json(compact(puzzle.goal))
    instruction = (
        f"Git puzzle {puzzle.id} ({puzzle.name}): run git commands, one per step, until "
        f"the repository matches the goal tree.\nGoal tree: {goal}"
    )
    if puzzle.disabled:
        instruction += "\nDisabled in this puzzle: " + ", ".join(puzzle.disabled)
    return Task(
        id=f"git-{puzzle.id}",
        env="git",
        instruction=instruction,
        data={
            "puzzle": puzzle.id,
            "name": puzzle.name,
            "difficulty": puzzle.difficulty,
            "start": dump_repo(puzzle.start),
            "goal": dump_repo(puzzle.goal),
            "compare": puzzle.rule,
            "disabled": list(puzzle.disabled),
            "budget": budget(len(puzzle.solution)),
        },
        hidden={"solution": list(puzzle.solution)},
    )


def task_puzzle(task: Task) -> Puzzle:
    """Rebuild the puzzle a git task was made from."""
    data = task.data
    return Puzzle(
        id=str(data["puzzle"]),
        name=str(data.get("name", data["puzzle"])),
        start=load_repo(data["start"], "start"),
        goal=load_repo(data["goal"], "goal"),
        solution=[str(c) for c in task.hidden.get("solution", [])],
        rule=str(data.get("compare", "default")),
        disabled=[str(d) for d in data.get("disabled", [])],
        difficulty=int(data.get("difficulty", 0)),
    )
