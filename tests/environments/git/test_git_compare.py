"""learnGitBranching's tree comparison rules."""

from __future__ import annotations

from environments.git.compare import matches, pick_rule, tree_matches
from environments.git.tree import Branch, Commit, Repo, Tree


def make(commits: str, branches: dict[str, str], head: str = "main", **tags: str) -> Tree:
    tree = Tree(head=head, tags=dict(tags))
    for spec in commits.split():
        cid, _, parents = spec.partition(":")
        tree.commits[cid] = Commit(cid, tuple(p for p in parents.split(",") if p))
    for name, target in branches.items():
        target, _, tracking = target.partition("@")
        tree.branches[name] = Branch(target, tracking or None)
    return tree


GOAL = make("C0 C1:C0 C2:C1 C3:C1", {"main": "C2", "bugFix": "C3"}, head="bugFix")


def test_identical_trees_match_and_extra_branches_or_orphans_do_not_matter() -> None:
    assert tree_matches(GOAL, GOAL)
    extra = make(
        "C0 C1:C0 C2:C1 C3:C1 C9:C0", {"main": "C2", "bugFix": "C3", "tmp": "C0"}, head="bugFix"
    )
    assert tree_matches(extra, GOAL)


def test_head_branch_targets_tags_and_tracking_all_count() -> None:
    assert not tree_matches(make("C0 C1:C0 C2:C1 C3:C1", {"main": "C2", "bugFix": "C3"}), GOAL)
    moved = make("C0 C1:C0 C2:C1 C3:C1", {"main": "C1", "bugFix": "C3"}, head="bugFix")
    assert not tree_matches(moved, GOAL)
    missing = make("C0 C1:C0 C2:C1 C3:C1", {"main": "C2"}, head="C3")
    assert not tree_matches(missing, GOAL)
    tagged = make("C0 C1:C0 C2:C1 C3:C1", {"main": "C2", "bugFix": "C3"}, head="bugFix", v1="C1")
    assert not tree_matches(tagged, GOAL) and tree_matches(tagged, tagged)
    tracked = make("C0 C1:C0 C2:C1 C3:C1", {"main": "C2@o/main", "bugFix": "C3"}, head="bugFix")
    assert not tree_matches(tracked, GOAL)


def test_commit_graph_is_compared_by_ids_and_parents() -> None:
    other_parent = make("C0 C1:C0 C2:C0 C3:C1", {"main": "C2", "bugFix": "C3"}, head="bugFix")
    assert not tree_matches(other_parent, GOAL)
    merge_a = make("C0 C1:C0 C2:C0 C3:C1,C2", {"main": "C3"})
    merge_b = make("C0 C1:C0 C2:C0 C3:C2,C1", {"main": "C3"})
    assert tree_matches(merge_a, merge_b)  # parents compare as a sorted list
    primed = make("C0 C1:C0 C2:C1 C3':C1", {"main": "C2", "bugFix": "C3'"}, head="bugFix")
    assert not tree_matches(primed, GOAL)
    assert tree_matches(primed, GOAL, "compareAllBranchesHashAgnostic")  # primes ignored


def test_hash_agnostic_and_main_only_rules() -> None:
    goal = make("C0 C1:C0 C2:C1 C3:C2", {"main": "C3", "side": "C2"})
    copy = make("C0 C1:C0 C2':C1 C3'':C2'", {"main": "C3''", "side": "C1"}, head="side")
    assert not tree_matches(copy, goal)
    assert tree_matches(copy, goal, "compareOnlyMainHashAgnostic")
    assert not tree_matches(copy, goal, "compareAllBranchesHashAgnostic")
    assert not tree_matches(copy, goal, "compareOnlyMain")
    same_main = make("C0 C1:C0 C2:C1 C3:C2", {"main": "C3"}, head="C1")
    assert tree_matches(same_main, goal, "compareOnlyMain")
    assert tree_matches(same_main, goal, "compareOnlyBranches") is False


def test_branch_cleanup_rule_counts_extra_branches() -> None:
    goal = make("C0 C1:C0", {"main": "C1"})
    extra = make("C0 C1:C0", {"main": "C1", "foo": "C1"})
    assert tree_matches(extra, goal)
    assert not tree_matches(extra, goal, "compareAllBranchesAndEnforceBranchCleanup")


def test_branch_names_and_head_compare_case_insensitively() -> None:
    goal = make("C0 C1:C0", {"bugFix": "C1"}, head="bugFix")
    mine = make("C0 C1:C0", {"bugfix": "C1"}, head="bugfix")
    assert tree_matches(mine, goal)


def test_origin_must_be_present_exactly_when_the_goal_has_one() -> None:
    local = make("C0 C1:C0", {"main": "C1@o/main", "o/main": "C1"})
    origin = make("C0 C1:C0", {"main": "C1"})
    goal = Repo(local, origin)
    assert matches(Repo(local.copy(), origin.copy()), goal)
    assert not matches(Repo(local.copy()), goal)
    assert not matches(goal, Repo(local.copy()))
    ahead = make("C0 C1:C0 C2:C1", {"main": "C2"})
    assert not matches(Repo(local.copy(), ahead), goal)


def test_pick_rule() -> None:
    assert pick_rule([]) == "default"
    assert pick_rule(["compareOnlyMain"]) == "compareOnlyMain"
    assert pick_rule(["compareWorkingChanges"]) is None
