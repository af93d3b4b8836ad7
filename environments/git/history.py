"""The commands that copy commits onto HEAD: rebase, cherry-pick and revert.

All three make primed copies (``C2'``) in learnGitBranching's order, which is
why they share :func:`creation_order`; they work on any
:class:`~environments.git.workspace.Workspace`, so the model dispatches here
without this module importing it.
"""

from __future__ import annotations

from environments.git.args import parse
from environments.git.refs import GitError, is_plain_name, resolve
from environments.git.tree import Branch, Tree, base_id, id_sort_key
from environments.git.workspace import Workspace


def creation_order(tree: Tree, ids: set[str]) -> list[str]:
    """``ids`` parents-first, ties by id: the order the commits were made in.

    learnGitBranching sorts the commits to replay by creation time, falling back
    to ids; a copy made later (``C2'``) can carry a smaller number than its own
    parent, so ids alone would replay a child before its parent.
    """
    waiting = {c: sum(p in ids for p in tree.commits[c].parents) for c in ids}
    children: dict[str, list[str]] = {c: [] for c in ids}
    for c in ids:
        for p in tree.commits[c].parents:
            if p in ids:
                children[p].append(c)
    ready = [c for c, n in waiting.items() if n == 0]
    out: list[str] = []
    while ready:
        ready.sort(key=id_sort_key, reverse=True)
        c = ready.pop()
        out.append(c)
        for child in children[c]:
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    return out


def rebase(model: Workspace, upstream: str, branch: str | None) -> str:
    """learnGitBranching's rebase: copy the commits only ``branch`` has onto ``upstream``."""
    tree = model.tree
    onto = resolve(tree, upstream)
    if branch is not None:
        current = resolve(tree, branch)
    else:
        current = tree.head_commit
    moves_ref = branch is None or (
        is_plain_name(branch) and branch in tree.branches and not branch.startswith("o/")
    )

    def finish(commit: str) -> None:
        if branch is None:
            model.move_head(commit)
        elif moves_ref:
            tree.branches[branch] = Branch(commit, tree.branches[branch].tracking)
            tree.head = branch
        else:
            tree.head = commit

    if onto in tree.ancestors(current):
        if branch is not None:
            finish(current)
        return "Current branch is up to date."
    if current in tree.ancestors(onto):
        finish(onto)
        return f"Fast-forwarded to {onto}."
    stop = tree.ancestors(onto)
    done = {base_id(c) for c in stop}
    todo = creation_order(tree, tree.ancestors(current) - stop)
    todo = [c for c in todo if len(tree.commits[c].parents) == 1 and base_id(c) not in done]
    if not todo:
        raise GitError("error: nothing to rebase: every commit is a merge or already upstream")
    base = onto
    made = []
    for cid in todo:
        base = model.new_commit([base], model.repo.copy_id(cid))
        made.append(base)
    finish(base)
    return f"Successfully rebased: {', '.join(made)} on top of {onto}."


def cherry_pick(model: Workspace, words: list[str]) -> str:
    usage = "git cherry-pick <commit>..."
    args = parse("cherry-pick", words, frozenset(), usage=usage)
    refs = args.expect(1, 99, usage)
    tree = model.tree
    have = tree.ancestors(tree.head_commit)
    picks = []
    for ref in refs:
        commit = resolve(tree, ref)
        if commit in have:
            raise GitError(
                f"error: commit {commit} is already in the history of HEAD; nothing to pick"
            )
        picks.append(commit)
    made = []
    for commit in picks:
        cid = model.new_commit([tree.head_commit], model.repo.copy_id(commit))
        model.move_head(cid)
        made.append(cid)
    return f"[{model.where()} {made[-1]}] picked " + ", ".join(
        f"{p} as {m}" for p, m in zip(picks, made, strict=True)
    )


def revert(model: Workspace, words: list[str]) -> str:
    usage = "git revert <commit>..."
    args = parse("revert", words, frozenset({"--no-edit"}), usage=usage)
    refs = args.expect(1, 99, usage)
    tree = model.tree
    targets = [resolve(tree, r) for r in refs]
    made = []
    for commit in targets:
        cid = model.new_commit([tree.head_commit], model.repo.copy_id(commit))
        model.move_head(cid)
        made.append(cid)
    return f"[{model.where()} {made[-1]}] reverted " + ", ".join(targets)
