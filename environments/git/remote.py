"""The remote commands: clone, fetch, pull, push (and learnGitBranching's fakeTeamwork).

There is one remote, ``origin``; its branches show up locally as
remote-tracking branches ``o/<name>``. Refspecs follow learnGitBranching:
``git fetch origin <src>:<dst>`` fetches the remote ``src`` (any revision)
into the *local* branch ``dst`` and leaves ``o/...`` alone, ``git push origin
<src>:<dst>`` pushes a local revision to the remote branch ``dst`` (made when
missing), and an empty source deletes (push) or creates (fetch) the
destination. A push is refused unless it fast-forwards the remote branch.
"""

from __future__ import annotations

from environments.git.args import parse
from environments.git.refs import GitError, check_new_name, resolve
from environments.git.tree import REMOTE_PREFIX, Branch, Commit, Tree, copy_commits, remote_name
from environments.git.workspace import Workspace


def _origin(model: Workspace) -> Tree:
    if model.repo.origin is None:
        raise GitError(
            "fatal: 'origin' does not appear to be a git repository\n"
            "fatal: Could not read from remote repository."
        )
    return model.repo.origin


def _remote_arg(positional: list[str]) -> None:
    if positional and positional[0] != "origin":
        raise GitError(f"fatal: '{positional[0]}' does not appear to be a git repository")


def _fetch_branch(model: Workspace, name: str) -> str:
    origin, local = _origin(model), model.tree
    target = origin.branches[name].target
    copy_commits(origin, local, [target])
    tracking = REMOTE_PREFIX + name
    old = local.branches.get(tracking)
    local.branches[tracking] = Branch(target)
    if old is None:
        return f" * [new branch]      {name} -> {tracking}"
    if old.target != target:
        return f"   {old.target}..{target}  {name} -> {tracking}"
    return ""


def _fetch_all(model: Workspace) -> str:
    lines = [_fetch_branch(model, name) for name in list(_origin(model).branches)]
    lines = [ln for ln in lines if ln]
    return "From origin\n" + "\n".join(lines) if lines else "(nothing new to fetch)"


def _fetch_spec(model: Workspace, spec: str) -> tuple[str, str]:
    """Fetch one refspec; returns (terminal text, the local ref to merge afterwards)."""
    origin, local = _origin(model), model.tree
    src, colon, dst = spec.partition(":")
    if not colon:
        if src not in origin.branches:
            raise GitError(f"fatal: couldn't find remote ref {src}")
        return _fetch_branch(model, src) or "(nothing new to fetch)", REMOTE_PREFIX + src
    if not dst or dst.startswith(REMOTE_PREFIX):
        raise GitError(f"fatal: invalid refspec '{spec}'")
    if not src:
        if dst not in local.branches:
            check_new_name(local, dst)
            local.branches[dst] = Branch(local.head_commit)
        return f" * [new branch]      -> {dst}", dst
    commit = resolve(origin, src)
    if dst == local.head:
        raise GitError(f"fatal: refusing to fetch into branch '{dst}' checked out")
    copy_commits(origin, local, [commit])
    if dst in local.branches:
        local.branches[dst] = Branch(commit, local.branches[dst].tracking)
    else:
        check_new_name(local, dst)
        local.branches[dst] = Branch(commit)
    return f"From origin\n   {src} -> {dst} ({commit})", dst


def fetch(model: Workspace, words: list[str]) -> str:
    usage = "git fetch [origin [<src>[:<dst>]]]"
    args = parse("fetch", words, frozenset({"--all", "-p", "--prune"}), usage=usage)
    positional = args.expect(0, 2, usage)
    _remote_arg(positional)
    _origin(model)
    if len(positional) < 2:
        return _fetch_all(model)
    return _fetch_spec(model, positional[1])[0]


def pull(model: Workspace, words: list[str]) -> str:
    usage = "git pull [--rebase] [origin [<src>[:<dst>]]]"
    args = parse("pull", words, frozenset({"--rebase", "-r", "--no-rebase", "--ff"}), usage=usage)
    positional = args.expect(0, 2, usage)
    _remote_arg(positional)
    _origin(model)
    if len(positional) < 2:
        tree = model.tree
        if tree.detached:
            raise GitError("fatal: You are not currently on a branch.")
        tracking = tree.branches[tree.head].tracking
        if tracking is None:
            raise GitError(
                "There is no tracking information for the current branch.\n"
                "hint: git branch -u o/<branch>, or git pull origin <branch>"
            )
        text, merge_ref = _fetch_all(model), tracking
    else:
        text, merge_ref = _fetch_spec(model, positional[1])
    if args.has("--rebase", "-r"):
        return text + "\n" + model.rebase(merge_ref, None)
    return text + "\n" + model.merge_into_head(merge_ref)


def _push_one(model: Workspace, commit: str, dst: str) -> str:
    origin, local = _origin(model), model.tree
    old = origin.branches.get(dst)
    if old is not None and old.target != commit:
        if old.target not in local.commits or old.target not in local.ancestors(commit):
            raise GitError(
                f" ! [rejected]        {commit} -> {dst} (fetch first)\n"
                "error: failed to push some refs to 'origin'\n"
                "hint: the remote has commits you do not have locally; "
                "integrate them first (git pull or git fetch + rebase/merge)."
            )
    copy_commits(local, origin, [commit])
    origin.branches[dst] = Branch(commit)
    local.branches[REMOTE_PREFIX + dst] = Branch(commit)
    if old is None:
        return f"To origin\n * [new branch]      {commit} -> {dst}"
    if old.target == commit:
        return "Everything up-to-date"
    return f"To origin\n   {old.target}..{commit}  -> {dst}"


def push(model: Workspace, words: list[str]) -> str:
    usage = "git push [origin [<src>[:<dst>]]]"
    args = parse("push", words, frozenset({"-u", "--set-upstream"}), usage=usage)
    positional = args.expect(0, 2, usage)
    _remote_arg(positional)
    origin, local = _origin(model), model.tree
    if len(positional) < 2:
        if local.detached:
            raise GitError("fatal: You are not currently on a branch.")
        branch = local.head
        tracking = local.branches[branch].tracking
        dst = remote_name(tracking) if tracking else branch
        text = _push_one(model, local.branches[branch].target, dst or branch)
        if tracking is None:
            local.branches[branch] = Branch(local.branches[branch].target, REMOTE_PREFIX + branch)
        return text
    src, colon, dst = positional[1].partition(":")
    if not colon:
        if src not in local.branches or src.startswith(REMOTE_PREFIX):
            raise GitError(f"error: src refspec {src} does not match any local branch")
        text = _push_one(model, local.branches[src].target, src)
        if local.branches[src].tracking is None:
            local.branches[src] = Branch(local.branches[src].target, REMOTE_PREFIX + src)
        return text
    if not dst:
        raise GitError(f"fatal: invalid refspec '{positional[1]}'")
    if not src:
        if dst not in origin.branches:
            raise GitError(f"error: unable to delete '{dst}': remote ref does not exist")
        if origin.head == dst:
            raise GitError(f"error: refusing to delete the current branch of origin: {dst}")
        del origin.branches[dst]
        local.branches.pop(REMOTE_PREFIX + dst, None)
        return f"To origin\n - [deleted]         {dst}"
    check_new_name(origin, dst)
    return _push_one(model, resolve(local, src), dst)


def clone(model: Workspace, words: list[str]) -> str:
    parse("clone", words, frozenset()).expect(0, 1, "git clone")
    if model.repo.origin is not None:
        raise GitError("fatal: destination path 'origin' already exists and is not empty.")
    local = model.tree
    own = {n: b for n, b in local.branches.items() if not n.startswith(REMOTE_PREFIX)}
    head = local.head if not local.detached else ("main" if "main" in own else next(iter(own)))
    model.repo.origin = Tree(
        dict(local.commits), {n: Branch(b.target) for n, b in own.items()}, dict(local.tags), head
    )
    for name, b in own.items():
        local.branches[REMOTE_PREFIX + name] = Branch(b.target)
        local.branches[name] = Branch(b.target, REMOTE_PREFIX + name)
    return "Cloning into 'origin'... done."


def fake_teamwork(model: Workspace, words: list[str]) -> str:
    usage = "git fakeTeamwork [<branch>] [<count>]"
    positional = parse("fakeTeamwork", words, frozenset()).expect(0, 2, usage)
    origin = _origin(model)
    branch, count = "main", 1
    for word in positional:
        if word.isdigit():
            count = int(word)
        else:
            branch = word
    if branch not in origin.branches:
        raise GitError(f"fatal: origin has no branch '{branch}'")
    if not 1 <= count <= 10:
        raise GitError("error: fakeTeamwork makes between 1 and 10 commits")
    made = []
    for _ in range(count):
        cid = model.repo.new_id()
        origin.commits[cid] = Commit(cid, (origin.branches[branch].target,))
        origin.branches[branch] = Branch(cid)
        made.append(cid)
    return f"A teammate pushed {', '.join(made)} to origin/{branch}."
