"""The git puzzle environment: one git command per step, solved when the tree matches.

Tasks come from a learnGitBranching level file (``--dataset levels.json``) or,
by default, from the seeded generator (``count`` puzzles, difficulties 1-5 in
turn, reproducible from ``seed``). The observation shows the current tree and
the goal tree as compact JSON; each step's feedback is the terminal's answer
plus the new tree. A task allows its solution's length plus five rounds (at
least six, at most :data:`~environments.git.tasks.MAX_BUDGET`); the episode's
own step limit applies on top. When two steps in a row leave the tree as it
was (errors included), the feedback asks for a reflection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog

from agentbus import (
    ActionProposed,
    Environment,
    EnvSetup,
    Feedback,
    Observation,
    Score,
    Task,
    TaskSource,
    UserError,
)
from environments.git.compare import matches
from environments.git.generator import generate
from environments.git.guide import git_guide
from environments.git.levels import Puzzle, load_levels
from environments.git.model import GitModel
from environments.git.tasks import MAX_BUDGET, puzzle_task, task_puzzle, to_json
from environments.git.tree import compact, view_key
from environments.task_source import loaded_or_generated

log = structlog.get_logger(__name__)


class GitEnvironment(Environment):
    """learnGitBranching-style puzzles over an in-memory git model."""

    name = "git"
    default_max_steps = MAX_BUDGET
    action_format = "git"

    def __init__(self) -> None:
        self.puzzle: Puzzle | None = None
        self.model: GitModel | None = None
        self.budget = MAX_BUDGET
        self.moves = 0
        self.errors = 0
        self.unchanged = 0
        self.solved = False

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        puzzles = loaded_or_generated(source, "git", playable_levels, generate)
        return EnvSetup(tasks=[puzzle_task(p) for p in puzzles], factory=cls)

    def guide(self, task: Task) -> dict[str, str]:
        return git_guide()

    async def reset(self, task: Task) -> Observation:
        self.puzzle = task_puzzle(task)
        self.model = GitModel(self.puzzle.start.copy(), self.puzzle.disabled)
        self.budget = int(task.data.get("budget", MAX_BUDGET))
        self.moves = self.errors = self.unchanged = 0
        self.solved = False
        current = compact(self.model.repo)
        text = (
            f"Puzzle {self.puzzle.id}: {self.puzzle.name}. You have {self.budget} commands.\n"
            f"Current tree: {to_json(current)}\n"
            f"Goal tree: {to_json(compact(self.puzzle.goal))}"
        )
        return Observation(text=text, data={"tree": current, "budget": self.budget})

    async def step(self, action: ActionProposed) -> Feedback:
        if self.model is None or self.puzzle is None:
            raise RuntimeError("step() before reset()")
        before = view_key(self.model.repo)
        result = self.model.run(action.text)
        self.moves += 1
        self.errors += 0 if result.ok else 1
        visible = view_key(self.model.repo) != before
        self.unchanged = 0 if visible else self.unchanged + 1
        self.solved = matches(self.model.repo, self.puzzle.goal, self.puzzle.rule)
        out_of_moves = not self.solved and self.moves >= self.budget
        tree = compact(self.model.repo)
        lines = [f"$ {' '.join(action.text.split())}", result.output or "(no output)"]
        lines.append(f"Tree: {to_json(tree)}")
        if self.solved:
            lines.append("The tree matches the goal. Puzzle solved!")
        elif out_of_moves:
            lines.append(
                f"No commands left ({self.budget} used); the tree does not match the goal."
            )
        elif not visible:
            lines.append("The tree did not change.")
        done = self.solved or out_of_moves
        return Feedback(
            text="\n".join(lines),
            done=done,
            success=self.solved if done else None,
            reward=1.0 if self.solved else 0.0,
            valid=result.ok,
            needs_reflection=self.unchanged >= 2 and not done,
            data={"tree": tree, "ok": result.ok, "changed": visible},
        )

    async def score(self) -> Score:
        details: dict[str, Any] = {
            "puzzle": self.puzzle.id if self.puzzle else None,
            "difficulty": self.puzzle.difficulty if self.puzzle else None,
            "solution_length": len(self.puzzle.solution) if self.puzzle else None,
            "moves": self.moves,
            "errors": self.errors,
            "budget": self.budget,
        }
        return Score(reward=1.0 if self.solved else 0.0, success=self.solved, details=details)


def playable_levels(path: Path) -> list[Puzzle]:
    """The playable puzzles of a level file (the skipped ones are logged); none is an error."""
    levels = load_levels(path)
    for level_id, why in levels.skipped.items():
        log.info("git level skipped", level=level_id, reason=why)
    if not levels.puzzles:
        raise UserError(f"no playable git levels in {path}")
    return levels.puzzles
