"""Loading learnGitBranching level files into puzzles.

A level file is a JSON list of levels (a single level object is accepted too),
each with ``id``, ``name``, ``start_tree`` (null = learnGitBranching's default
``C0 <- C1`` repository), ``goal_tree``, ``solution`` (commands separated by
``;``), ``compare`` (the level's comparison rule, empty = default) and
``disabled`` (commands the level forbids), as in
/work/shared/learngitbranching/levels.json.

A level is kept only when the model can play it: no staging area, a known
comparison rule, and an official solution that, replayed on the model, reaches
the goal. The others are reported (``skipped``) rather than turned into
unsolvable tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentbus import UserError, read_bounded
from environments.git.compare import matches, pick_rule
from environments.git.model import GitModel
from environments.git.tree import Repo, TreeFormatError, default_tree, load_repo


@dataclass
class Puzzle:
    """A start tree, a goal tree, the rule that compares them and a known solution."""

    id: str
    name: str
    start: Repo
    goal: Repo
    solution: list[str]
    rule: str = "default"
    disabled: list[str] = field(default_factory=list)
    difficulty: int = 0

    def replay(self, commands: list[str] | None = None) -> GitModel:
        """A model of the start tree after ``commands`` (the solution by default)."""
        model = GitModel(self.start.copy(), self.disabled)
        for command in self.solution if commands is None else commands:
            model.run(command)
        return model

    def solved_by(self, commands: list[str]) -> bool:
        model = GitModel(self.start.copy(), self.disabled)
        for command in commands:
            if not model.run(command).ok:
                return False
        return matches(model.repo, self.goal, self.rule)


@dataclass
class LevelFile:
    puzzles: list[Puzzle]
    #: level id -> why it was left out
    skipped: dict[str, str]


def split_solution(text: str) -> list[str]:
    return [part.strip() for part in text.split(";") if part.strip()]


def _level(raw: Any, index: int) -> tuple[Puzzle | None, str]:
    if not isinstance(raw, dict):
        raise UserError(f"level #{index}: expected an object, got {type(raw).__name__}")
    level_id = raw.get("id")
    if not isinstance(level_id, str) or not level_id:
        raise UserError(f"level #{index}: missing 'id'")
    for key in ("goal_tree", "solution"):
        if key not in raw:
            raise UserError(f"level {level_id}: missing '{key}'")
    if not isinstance(raw["solution"], str):
        raise UserError(f"level {level_id}: 'solution' must be a string of ';'-separated commands")
    compare = raw.get("compare") or []
    disabled = raw.get("disabled") or []
    if not isinstance(compare, list) or not isinstance(disabled, list):
        raise UserError(f"level {level_id}: 'compare' and 'disabled' must be lists")
    goal_raw, start_raw = raw["goal_tree"], raw.get("start_tree")
    if isinstance(goal_raw, dict) and "workingChanges" in goal_raw:
        return None, "uses the staging area (working changes), which is not modelled"
    if isinstance(start_raw, dict) and "workingChanges" in start_raw:
        return None, "uses the staging area (working changes), which is not modelled"
    try:
        goal = load_repo(goal_raw, f"level {level_id}: goal_tree")
        start = (
            Repo(default_tree())
            if start_raw is None
            else load_repo(start_raw, f"level {level_id}: start_tree")
        )
    except TreeFormatError as exc:
        raise UserError(str(exc)) from None
    rule = pick_rule(str(c) for c in compare)
    if rule is None:
        return None, f"comparison rule {compare} is not supported"
    puzzle = Puzzle(
        id=level_id,
        name=str(raw.get("name") or level_id),
        start=start,
        goal=goal,
        solution=split_solution(raw["solution"]),
        rule=rule,
        disabled=[str(d) for d in disabled],
    )
    model = GitModel(start.copy(), puzzle.disabled)
    for command in puzzle.solution:
        result = model.run(command)
        if not result.ok:
            return (
                None,
                f"official solution step {command!r} is not supported: "
                f"{result.output.splitlines()[0]}",
            )
    if not matches(model.repo, goal, rule):
        return None, "official solution does not reach the goal in this model"
    puzzle.difficulty = len(puzzle.solution)
    return puzzle, ""


def parse_levels(data: Any, where: str = "level file") -> LevelFile:
    """Turn parsed JSON into puzzles; UserError for a structurally malformed file."""
    if isinstance(data, dict) and "levels" in data:
        data = data["levels"]
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise UserError(f"{where}: expected a JSON list of levels")
    puzzles, skipped = [], {}
    for index, raw in enumerate(data):
        try:
            puzzle, why = _level(raw, index)
        except UserError as exc:
            raise UserError(f"{where}: {exc}") from None
        if puzzle is None:
            skipped[str(raw.get("id"))] = why
        else:
            puzzles.append(puzzle)
    return LevelFile(puzzles, skipped)


def load_levels(path: Path) -> LevelFile:
    """Read a learnGitBranching level file (UserError when missing or malformed)."""
    try:
        data = orjson.loads(read_bounded(Path(path), "git level file"))
    except FileNotFoundError:
        raise UserError(f"git level file not found: {path}") from None
    except OSError as exc:
        raise UserError(f"cannot read git level file {path}: {exc.strerror}") from None
    except orjson.JSONDecodeError as exc:
        raise UserError(f"git level file {path} is not valid JSON: {exc}") from None
    return parse_levels(data, str(path))
