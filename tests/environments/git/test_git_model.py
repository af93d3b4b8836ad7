"""The in-memory git model against hand-written command sequences with known trees."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from environments.git.generator import generate
from environments.git.model import GitModel
from environments.git.solver import candidates
from environments.git.tree import Branch, Commit, Repo, Tree, alt_id, default_tree, state_key


def make(
    commits: str, branches: dict[str, str], head: str = "main", tags: dict[str, str] | None = None
) -> Tree:
    """Tree from ``"C0 C1:C0 C2:C1 C3:C1,C2"`` (id:parents) and branch -> target."""
    tree = Tree(head=head, tags=dict(tags or {}))
    for spec in commits.split():
        cid, _, parents = spec.partition(":")
        tree.commits[cid] = Commit(cid, tuple(p for p in parents.split(",") if p))
    for name, target in branches.items():
        tracking = None
        if "@" in target:
            target, tracking = target.split("@")
        tree.branches[name] = Branch(target, tracking)
    return tree


def run(model: GitModel, *commands: str) -> None:
    for command in commands:
        result = model.run(command)
        assert result.ok, f"{command}: {result.output}"


def parents(model: GitModel, cid: str) -> tuple[str, ...]:
    return model.tree.commits[cid].parents


def targets(model: GitModel) -> dict[str, str]:
    return {n: b.target for n, b in model.tree.branches.items()}


def test_commit_makes_the_next_id_on_the_checked_out_branch() -> None:
    git = GitModel(Repo(default_tree()))
    run(git, "git commit", "git commit -m 'second one'")
    assert parents(git, "C2") == ("C1",) and parents(git, "C3") == ("C2",)
    assert targets(git) == {"main": "C3"} and git.tree.head == "main"


def test_ids_skip_numbers_already_in_use_and_amend_makes_a_prime() -> None:
    git = GitModel(Repo(make("C0 C1:C0 C3:C1", {"main": "C1", "x": "C3"})))
    run(git, "git commit", "git commit")
    assert parents(git, "C2") == ("C1",) and parents(git, "C4") == ("C2",)
    run(git, "git commit --amend")
    assert parents(git, "C4'") == ("C2",) and targets(git)["main"] == "C4'"


def test_branch_checkout_and_checkout_b() -> None:
    git = GitModel(Repo(default_tree()))
    run(git, "git branch bugFix", "git checkout bugFix", "git commit")
    assert targets(git) == {"main": "C1", "bugFix": "C2"} and git.tree.head == "bugFix"
    run(git, "git checkout -b side main", "git commit")
    assert targets(git)["side"] == "C3" and parents(git, "C3") == ("C1",)
    run(git, "git switch main", "git switch -c topic C0")
    assert git.tree.head == "topic" and targets(git)["topic"] == "C0"


def test_detached_head_and_relative_refs() -> None:
    tree = make("C0 C1:C0 C2:C1 C3:C1 C4:C2,C3 C5:C4", {"main": "C5", "bugFix": "C3"})
    git = GitModel(Repo(tree))
    run(git, "git checkout main^")
    assert git.tree.head == "C4" and git.tree.detached
    run(git, "git checkout HEAD^2")
    assert git.tree.head == "C3"
    run(git, "git checkout main~3")
    assert git.tree.head == "C1"
    run(git, "git checkout main^^2^")
    assert git.tree.head == "C1"
    run(git, "git checkout c2")  # ids are accepted in lower case, as in learnGitBranching
    assert git.tree.head == "C2"
    run(git, "git commit")
    assert parents(git, "C6") == ("C2",) and git.tree.head == "C6"
    assert targets(git) == {"main": "C5", "bugFix": "C3"}
    run(git, "git checkout bugFix")
    assert not git.tree.detached


def test_merge_fast_forward_real_merge_and_up_to_date() -> None:
    git = GitModel(Repo(make("C0 C1:C0 C2:C1 C3:C1", {"main": "C2", "bugFix": "C3"})))
    run(git, "git merge bugFix")
    assert parents(git, "C4") == ("C2", "C3") and targets(git)["main"] == "C4"
    assert git.run("git merge bugFix").output == "Already up to date."
    run(git, "git checkout bugFix", "git merge main")
    assert targets(git)["bugFix"] == "C4" and "C5" not in git.tree.commits


def test_rebase_copies_commits_with_primes() -> None:
    tree = make("C0 C1:C0 C2:C1 C3:C2 C4:C1", {"main": "C4", "bugFix": "C3"}, head="bugFix")
    git = GitModel(Repo(tree))
    run(git, "git rebase main")
    assert parents(git, "C2'") == ("C4",) and parents(git, "C3'") == ("C2'",)
    assert targets(git) == {"main": "C4", "bugFix": "C3'"} and git.tree.head == "bugFix"
    run(git, "git rebase bugFix main")  # main is behind: fast-forward, and main is checked out
    assert targets(git)["main"] == "C3'" and git.tree.head == "main"
    assert git.run("git rebase bugFix").output == "Current branch is up to date."


def test_rebase_twice_gives_double_primes_and_skips_applied_commits() -> None:
    tree = make("C0 C1:C0 C2:C1 C3:C1 C4:C1", {"main": "C3", "side": "C2", "other": "C4"})
    git = GitModel(Repo(tree))
    run(git, "git rebase main side")
    assert targets(git)["side"] == "C2'" and git.tree.head == "side"
    run(git, "git rebase other side")  # replays C3 and C2' onto C4, parents first
    assert parents(git, "C3'") == ("C4",) and parents(git, "C2''") == ("C3'",)
    assert targets(git)["side"] == "C2''"
    # a commit whose copy is already upstream is not replayed again
    tree = make("C0 C1:C0 C2:C1 C2':C1 C4:C2' C5:C2", {"main": "C4", "b": "C5"}, "b")
    git = GitModel(Repo(tree))
    run(git, "git rebase main")
    assert parents(git, "C5'") == ("C4",) and "C2''" not in git.tree.commits


def test_cherry_pick_several_and_refuses_what_is_already_there() -> None:
    tree = make("C0 C1:C0 C2:C1 C3:C2 C4:C1", {"main": "C4", "side": "C3"})
    git = GitModel(Repo(tree))
    run(git, "git cherry-pick C3 C2")
    assert parents(git, "C3'") == ("C4",) and parents(git, "C2'") == ("C3'",)
    assert targets(git)["main"] == "C2'"
    result = git.run("git cherry-pick C1")
    assert not result.ok and "C1" in result.output and not result.changed


def test_reset_revert_tag_and_branch_force_delete() -> None:
    git = GitModel(Repo(make("C0 C1:C0 C2:C1", {"main": "C2", "pushed": "C2"}, "main")))
    run(git, "git reset HEAD~1")
    assert targets(git)["main"] == "C1"
    run(git, "git checkout pushed", "git revert HEAD")
    assert parents(git, "C2'") == ("C2",) and targets(git)["pushed"] == "C2'"
    run(git, "git tag v1 main", "git checkout v1")
    assert git.tree.tags == {"v1": "C1"} and git.tree.head == "C1"
    assert "already exists" in git.run("git tag v1 C0").output
    run(git, "git branch -f main C0", "git branch -d pushed")
    assert targets(git) == {"main": "C0"}
    run(git, "git checkout main")
    assert "checked out" in git.run("git branch -d main").output


def test_describe_names_the_nearest_tag() -> None:
    tree = make("C0 C1:C0 C2:C1 C3:C2", {"main": "C3"}, tags={"v1": "C1"})
    git = GitModel(Repo(tree))
    assert git.run("git describe").output == "v1_2_gC3"
    assert git.run("git describe main~2").output == "v1"
    assert "No tags" in git.run("git describe C0").output


def remote_repo() -> Repo:
    local = make("C0 C1:C0", {"main": "C1@o/main", "o/main": "C1"})
    origin = make("C0 C1:C0 C2:C1 C3:C2", {"main": "C3"})
    return Repo(local, origin)


def test_fetch_updates_remote_tracking_branches_only() -> None:
    git = GitModel(remote_repo())
    run(git, "git fetch")
    assert targets(git) == {"main": "C1", "o/main": "C3"}
    assert parents(git, "C3") == ("C2",) and git.tree.head == "main"


def test_pull_fast_forwards_and_push_is_rejected_when_behind() -> None:
    git = GitModel(remote_repo())
    run(git, "git commit")  # C4: the first free id, remote ids included
    assert parents(git, "C4") == ("C1",)
    rejected = git.run("git push")
    assert not rejected.ok and "rejected" in rejected.output
    run(git, "git pull --rebase")
    assert parents(git, "C4'") == ("C3",) and targets(git)["main"] == "C4'"
    run(git, "git push")
    assert git.repo.origin is not None
    assert git.repo.origin.branches["main"].target == "C4'"
    assert targets(git)["o/main"] == "C4'"


def test_pull_merges_and_refspecs_push_fetch_delete() -> None:
    git = GitModel(remote_repo())
    run(git, "git commit", "git pull")
    assert parents(git, "C5") == ("C4", "C3") and targets(git)["main"] == "C5"
    run(git, "git push origin main^:feature")
    assert git.repo.origin is not None
    assert git.repo.origin.branches["feature"].target == "C4" and targets(git)["o/feature"] == "C4"
    run(git, "git push origin :feature")
    assert "feature" not in git.repo.origin.branches and "o/feature" not in git.tree.branches
    run(git, "git fetch origin main~1:older")  # resolved on the remote: C3~1
    assert targets(git)["older"] == "C2" and git.tree.branches["older"].tracking is None
    run(git, "git checkout -b side o/main")
    assert git.tree.branches["side"].tracking == "o/main"


def test_clone_makes_origin_and_tracking_branches() -> None:
    git = GitModel(Repo(default_tree()))
    run(git, "git clone", "git fakeTeamwork 2")
    assert git.repo.origin is not None
    assert git.repo.origin.branches["main"].target == "C3"
    assert git.tree.branches["main"] == Branch("C1", "o/main")
    assert "already exists" in git.run("git clone").output


def test_undo_takes_back_the_last_change() -> None:
    git = GitModel(Repo(default_tree()))
    run(git, "git commit", "git checkout -b x")
    run(git, "undo")
    assert git.tree.head == "main" and "x" not in git.tree.branches
    run(git, "undo", "git commit")
    assert targets(git) == {"main": "C2"}  # the counter came back too
    run(git, "undo")
    assert not git.run("undo").ok


@pytest.mark.parametrize(
    ("command", "needle"),
    [
        ("git foo", "not a git command"),
        ("ls -la", "command not found"),
        ("git", "usage"),
        ("", "empty"),
        ("git checkout nowhere", "did not match"),
        ("git checkout", "too few arguments"),
        ("git checkout -b", "too few arguments"),
        ("git branch C7", "not a valid branch name"),
        ("git branch main", "already exists"),
        ("git commit; git commit", "one command per action"),
        ("git commit\ngit commit", "one command per action"),
        ("git rebase -i main", "interactive rebase"),
        ("git commit --frobnicate", "unknown option"),
        ("git commit -m 'unbalanced", "syntax error"),
        ("git merge HEAD~9", "unknown revision"),
        ("git fetch", "does not appear to be a git repository"),
        ("git push upstream main", "does not appear to be a git repository"),
        ("git add file.txt", "not available"),
        ("git reset", "too few arguments"),
        ("git merge main bugFix", "too many arguments"),
    ],
)
def test_bad_commands_answer_like_a_terminal(command: str, needle: str) -> None:
    git = GitModel(Repo(default_tree()))
    before = git.repo.copy()
    result = git.run(command)
    assert not result.ok and not result.changed
    assert needle in result.output
    assert git.repo.local.branches == before.local.branches
    assert git.repo.local.commits == before.local.commits


def test_disabled_commands_are_refused() -> None:
    git = GitModel(Repo(default_tree()), disabled=["git revert"])
    result = git.run("git revert HEAD")
    assert not result.ok and "disabled" in result.output


def test_alt_ids_follow_learngitbranching() -> None:
    assert [alt_id(x) for x in ("C1", "C1'", "C1''", "C1'''", "C1'^4")] == [
        "C1'",
        "C1''",
        "C1'''",
        "C1'^4",
        "C1'^5",
    ]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40))
def test_any_input_gets_an_answer_never_an_exception(text: str) -> None:
    git = GitModel(Repo(default_tree()))
    result = git.run(text)
    assert isinstance(result.output, str)
    result = git.run("git " + text)
    assert isinstance(result.output, str)


def test_random_commands_then_undo_everything_restores_the_start_exactly() -> None:
    rng = random.Random(1)
    for puzzle in generate(40, 9):
        git = GitModel(puzzle.start.copy())
        start = state_key(git.repo)
        for _ in range(6):
            options = list(candidates(git, puzzle.goal))
            before = state_key(git.repo)
            result = git.run(rng.choice(options))
            if not result.ok:
                assert state_key(git.repo) == before  # failed commands change nothing
        while git.can_undo:
            git.run("undo")
        assert state_key(git.repo) == start
