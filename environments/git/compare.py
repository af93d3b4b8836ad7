"""When does a tree match the goal: learnGitBranching's comparison rules.

The default rule (most levels and every generated puzzle): HEAD points to the
same thing, every branch of the goal exists with the same target and the same
remote-tracking branch, the commit graph below each goal branch is the same
(ids and parents, parents compared as a sorted list), and the tags are equal.
Extra branches of the player's tree are ignored; commits not reachable from a
goal branch are ignored. When the goal has a remote, the player's tree must
have one too and it is compared by the same rule.

A few levels ask for something looser (only ``main``, or ignoring the primes
that copies add to ids); their rule names are the ones learnGitBranching's
level files use. Branch names and HEAD compare case-insensitively, as there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from environments.git.tree import Branch, Commit, Repo, Tree, base_id

RULES: tuple[str, ...] = (
    "default",
    "compareOnlyMain",
    "compareOnlyBranches",
    "compareAllBranchesHashAgnostic",
    "compareOnlyMainHashAgnostic",
    "compareOnlyMainHashAgnosticWithAsserts",
    "compareAllBranchesAndEnforceBranchCleanup",
)


def _lower(branches: dict[str, Branch]) -> dict[str, Branch]:
    return {name.lower(): b for name, b in branches.items()}


def _graph_equal(actual: Tree, goal: Tree, a: str, b: str, agnostic: bool) -> bool:
    """Recursive comparison of the history below two commits (memoised on pairs)."""
    seen: set[tuple[str, str]] = set()

    def same(ca: Commit | None, cb: Commit | None) -> bool:
        if ca is None or cb is None:
            return ca is cb
        if (ca.id, cb.id) in seen:
            return True
        seen.add((ca.id, cb.id))
        if agnostic:
            if base_id(ca.id) != base_id(cb.id) or bool(ca.parents) != bool(cb.parents):
                return False
        elif ca.id != cb.id or sorted(ca.parents) != sorted(cb.parents):
            return False
        pa, pb = sorted(ca.parents), sorted(cb.parents)
        for i in range(max(len(pa), len(pb))):
            child_a = actual.commits.get(pa[i]) if i < len(pa) else None
            child_b = goal.commits.get(pb[i]) if i < len(pb) else None
            if not same(child_a, child_b):
                return False
        return True

    return same(actual.commits.get(a), goal.commits.get(b))


def _branches_equal(actual: Tree, goal: Tree, names: Iterable[str], agnostic: bool) -> bool:
    mine, theirs = _lower(actual.branches), _lower(goal.branches)
    for name in names:
        a, b = mine.get(name), theirs.get(name)
        if a is None or b is None:
            return False
        if a.tracking != b.tracking:
            return False
        if agnostic:
            if base_id(a.target) != base_id(b.target):
                return False
        elif a.target != b.target:
            return False
        if not _graph_equal(actual, goal, a.target, b.target, agnostic):
            return False
    return True


def _goal_branches(goal: Tree) -> list[str]:
    return [name.lower() for name in goal.branches]


def _all_branches(actual: Tree, goal: Tree) -> list[str]:
    return sorted({n.lower() for n in actual.branches} | {n.lower() for n in goal.branches})


def _default(actual: Tree, goal: Tree) -> bool:
    return (
        actual.head.lower() == goal.head.lower()
        and _branches_equal(actual, goal, _goal_branches(goal), agnostic=False)
        and actual.tags == goal.tags
    )


_SHALLOW: dict[str, Callable[[Tree, Tree], bool]] = {
    "default": _default,
    "compareOnlyMain": lambda a, g: _branches_equal(a, g, ["main"], agnostic=False),
    "compareOnlyBranches": lambda a, g: _branches_equal(a, g, _goal_branches(g), agnostic=False),
    "compareAllBranchesHashAgnostic": lambda a, g: _branches_equal(
        a, g, _all_branches(a, g), agnostic=True
    ),
    "compareOnlyMainHashAgnostic": lambda a, g: _branches_equal(a, g, ["main"], agnostic=True),
    # the level files' extra asserts are not part of the export; the hash-agnostic part is
    "compareOnlyMainHashAgnosticWithAsserts": lambda a, g: _branches_equal(
        a, g, ["main"], agnostic=True
    ),
    "compareAllBranchesAndEnforceBranchCleanup": lambda a, g: _branches_equal(
        a, g, _all_branches(a, g), agnostic=False
    ),
}


def tree_matches(actual: Tree, goal: Tree, rule: str = "default") -> bool:
    """One tree against its goal tree under ``rule`` (see :data:`RULES`)."""
    return _SHALLOW[rule](actual, goal)


def matches(actual: Repo, goal: Repo, rule: str = "default") -> bool:
    """The player's repository against the goal, remote included when the goal has one."""
    if (actual.origin is None) != (goal.origin is None):
        return False
    if not tree_matches(actual.local, goal.local, rule):
        return False
    if goal.origin is not None and actual.origin is not None:
        return tree_matches(actual.origin, goal.origin, rule)
    return True


def pick_rule(names: Iterable[str]) -> str | None:
    """The first known rule among a level's ``compare`` list; "default" when empty."""
    names = list(names)
    if not names:
        return "default"
    for name in names:
        if name in _SHALLOW:
            return name
    return None
