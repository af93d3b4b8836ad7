"""The right next command from any state of a puzzle, for the simulator's expert.

On the recorded path the answer is the solution's next command (states are
recognised exactly, ids and the commit counter included). Off the path, in
order: a later part of the solution that still reaches the goal from here;
one goal-directed command that lands on the path (or solves it), ``undo``
included; a chain of ``undo`` back onto the path; failing all of that, the
single command that brings the tree closest to the goal. Everything is a few
hundred model steps at most, cheap enough for the event loop.
"""

from __future__ import annotations

from collections.abc import Iterator

from environments.git.compare import matches
from environments.git.levels import Puzzle
from environments.git.model import GitModel
from environments.git.tree import Repo, Tree, id_sort_key, state_key


def similarity(repo: Repo, goal: Repo) -> int:
    """A rough closeness score: matching branches, HEAD, tags and commits."""

    def one(tree: Tree | None, target: Tree | None) -> int:
        if tree is None or target is None:
            return 0
        score = 2 * (tree.head.lower() == target.head.lower())
        for name, branch in target.branches.items():
            mine = tree.branches.get(name)
            score += 2 * (mine is not None and mine.target == branch.target)
        score += sum(tree.tags.get(t) == c for t, c in target.tags.items())
        wanted = target.reachable()
        score += sum(tree.commits.get(c) == target.commits[c] for c in wanted)
        score -= len(tree.reachable() - wanted)
        return score

    return one(repo.local, goal.local) + one(repo.origin, goal.origin)


def candidates(model: GitModel, goal: Repo) -> Iterator[str]:
    """Plausible single commands, steered by what the goal tree shows."""
    tree, target = model.tree, goal.local
    local = sorted(n for n in tree.branches if not n.startswith("o/"))
    remote = sorted(n for n in tree.branches if n.startswith("o/"))
    visible = sorted(tree.reachable(), key=id_sort_key)
    history = tree.ancestors(tree.head_commit)
    yield "undo"
    yield "git commit"
    for name in local:
        yield f"git checkout {name}"
        yield f"git merge {name}"
        yield f"git rebase {name}"
    for name in remote:
        yield f"git merge {name}"
        yield f"git rebase {name}"
        yield f"git checkout {name}"
    if target.detached and target.head in tree.commits:
        yield f"git checkout {target.head}"
    for name, branch in target.branches.items():
        if name.startswith("o/"):
            continue
        have = branch.target in tree.commits
        if name not in tree.branches:
            yield f"git checkout -b {name}"
            yield f"git branch {name}"
            if have:
                yield f"git branch {name} {branch.target}"
                yield f"git checkout -b {name} {branch.target}"
            if branch.tracking:
                yield f"git checkout -b {name} {branch.tracking}"
        elif have and tree.branches[name].target != branch.target:
            yield f"git branch -f {name} {branch.target}"
            yield f"git reset {branch.target}"
    for tag, commit in target.tags.items():
        if tag not in tree.tags and commit in tree.commits:
            yield f"git tag {tag} {commit}"
    for cid in visible:
        if cid not in history:
            yield f"git cherry-pick {cid}"
        yield f"git checkout {cid}"
    yield "git revert HEAD"
    yield "git commit --amend"
    for a in local:
        for b in local:
            if a != b:
                yield f"git rebase {a} {b}"
    if model.repo.origin is not None:
        yield "git fetch"
        yield "git pull"
        yield "git pull --rebase"
        yield "git push"
        for name in local:
            yield f"git push origin {name}"
    elif goal.origin is not None:
        yield "git clone"


class Solver:
    """Knows one puzzle's solution path and finds the next command from any state."""

    def __init__(self, puzzle: Puzzle, task: object = None) -> None:
        self.puzzle = puzzle
        #: what the puzzle was built from (the expert checks it to keep caches honest)
        self.task = task
        model = self.start()
        #: state -> how many solution commands lead to it (the largest when repeated)
        self.path: dict[tuple[object, ...], int] = {state_key(model.repo): 0}
        for i, command in enumerate(puzzle.solution):
            model.run(command)
            self.path[state_key(model.repo)] = i + 1

    def start(self) -> GitModel:
        return GitModel(self.puzzle.start.copy(), self.puzzle.disabled)

    def replay(self, actions: list[str]) -> GitModel:
        model = self.start()
        for action in actions:
            model.run(action)
        return model

    def solved(self, model: GitModel) -> bool:
        return matches(model.repo, self.puzzle.goal, self.puzzle.rule)

    def remaining(self, model: GitModel) -> int | None:
        """Commands left when ``model`` is on the recorded path, else None."""
        done = self.path.get(state_key(model.repo))
        return None if done is None else len(self.puzzle.solution) - done

    def next_command(self, model: GitModel) -> str | None:
        """The best next command, or None when the puzzle is already solved."""
        if self.solved(model):
            return None
        solution = self.puzzle.solution
        left = self.remaining(model)
        if left:
            return solution[len(solution) - left]
        for k in range(len(solution) - 1, -1, -1):
            trial = model.clone()
            if all(trial.run(c).ok for c in solution[k:]) and self.solved(trial):
                return solution[k]
        best: tuple[int, str] | None = None
        closest: tuple[int, str] | None = None
        for command in dict.fromkeys(candidates(model, self.puzzle.goal)):
            trial = model.clone()
            result = trial.run(command)
            if not result.ok or not result.changed:
                continue
            if self.solved(trial):
                return command
            after = self.remaining(trial)
            if after is not None and (best is None or after + 1 < best[0]):
                best = (after + 1, command)
            score = similarity(trial.repo, self.puzzle.goal)
            if closest is None or score > closest[0]:
                closest = (score, command)
        trial = model.clone()
        for undos in range(1, trial.can_undo + 1):
            trial.run("undo")
            after = self.remaining(trial)
            if after is not None:
                if best is None or undos + after < best[0]:
                    best = (undos + after, "undo")
                break
        if best is not None:
            return best[1]
        if closest is not None:
            return closest[1]
        return solution[0] if solution else "git status"

    def effect(self, model: GitModel, command: str) -> tuple[bool, tuple[object, ...]]:
        """(ok, state after) of ``command`` from ``model``, for comparing commands."""
        trial = model.clone()
        result = trial.run(command)
        return result.ok, state_key(trial.repo)

    def same_effect(self, model: GitModel, a: str, b: str) -> bool:
        ok_a, after_a = self.effect(model, a)
        ok_b, after_b = self.effect(model, b)
        return ok_a and ok_b and after_a == after_b
