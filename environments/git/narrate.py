"""Words about git states for the expert's answers: what a command does, what differs.

Both functions read the model, so the explanations in a simulated plan or
thought are true statements about this puzzle (or, for a wrong answer, true
statements about the wrong command), the way a capable model would write them.
"""

from __future__ import annotations

from environments.git.model import GitModel
from environments.git.tree import Repo, Tree, id_sort_key


def _tree_changes(before: Tree, after: Tree, prefix: str = "") -> list[str]:
    out: list[str] = []
    for cid in sorted(set(after.commits) - set(before.commits), key=id_sort_key):
        parents = " and ".join(after.commits[cid].parents)
        out.append(f"creates {prefix}{cid} on top of {parents}")
    for name, branch in after.branches.items():
        old = before.branches.get(name)
        if old is None:
            out.append(f"creates branch {prefix}{name} at {branch.target}")
        elif old.target != branch.target:
            out.append(f"moves {prefix}{name} from {old.target} to {branch.target}")
        elif old.tracking != branch.tracking and branch.tracking:
            out.append(f"makes {prefix}{name} track {branch.tracking}")
    for name in before.branches.keys() - after.branches.keys():
        out.append(f"deletes branch {prefix}{name}")
    for name, commit in after.tags.items():
        if before.tags.get(name) != commit:
            out.append(f"tags {commit} as {name}")
    if before.head != after.head and not prefix:
        if after.detached:
            out.append(f"detaches HEAD at {after.head}")
        else:
            out.append(f"checks out {after.head}")
    return out


INTENT = {
    "commit": "records a new commit",
    "branch": "sets the branch up",
    "checkout": "moves HEAD there",
    "switch": "moves HEAD there",
    "merge": "brings those commits in",
    "rebase": "replays the commits on top",
    "cherry-pick": "copies those commits onto HEAD",
    "reset": "moves the branch back",
    "revert": "adds a commit that undoes it",
    "tag": "marks that commit",
    "fetch": "downloads the remote's commits",
    "pull": "brings the remote's work in",
    "push": "publishes the branch to origin",
}


def describe(model: GitModel, command: str) -> str:
    """What ``command`` would do from ``model``'s state, in a short clause.

    A command that would fail is described by its intent, as its author would
    (nobody proposes a command they expect to fail).
    """
    trial = model.clone()
    result = trial.run(command)
    if not result.ok:
        words = command.split()
        return INTENT.get(words[1] if len(words) > 1 else "", "moves the tree towards the goal")
    changes = _repo_changes(model.repo, trial.repo)
    return "; ".join(changes) if changes else "changes nothing"


def _repo_changes(before: Repo, after: Repo) -> list[str]:
    out = _tree_changes(before.local, after.local)
    if after.origin is not None:
        if before.origin is None:
            out.append("creates the remote origin")
        else:
            out += _tree_changes(before.origin, after.origin, "origin/")
    return out


def differences(repo: Repo, goal: Repo, limit: int = 4) -> list[str]:
    """The most visible ways ``repo`` differs from ``goal`` (at most ``limit``)."""
    out: list[str] = []
    tree, target = repo.local, goal.local
    for name, branch in target.branches.items():
        mine = tree.branches.get(name)
        if mine is None:
            out.append(f"branch {name} is missing (goal: at {branch.target})")
        elif mine.target != branch.target:
            out.append(f"{name} is at {mine.target} but the goal has it at {branch.target}")
    missing = sorted(target.reachable() - set(tree.commits), key=id_sort_key)
    if missing:
        out.append("commits still to make: " + ", ".join(missing))
    if tree.head.lower() != target.head.lower():
        out.append(f"HEAD is {tree.head} but should be {target.head}")
    for name, commit in target.tags.items():
        if tree.tags.get(name) != commit:
            out.append(f"tag {name} should point to {commit}")
    if goal.origin is not None:
        if repo.origin is None:
            out.append("there is no remote yet")
        else:
            for name, branch in goal.origin.branches.items():
                mine = repo.origin.branches.get(name)
                if mine is None or mine.target != branch.target:
                    now = mine.target if mine else "missing"
                    out.append(f"origin/{name} should be at {branch.target} (now {now})")
    return out[:limit]
