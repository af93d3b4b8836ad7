"""Reading revisions: names, ids and relative refs (``main^^2~3``, ``HEAD~2``).

A revision is a base (HEAD, a branch, a remote-tracking branch, a tag or a
commit id; commit ids also in lower case, as learnGitBranching accepts) and
any chain of ``^`` (first parent), ``^n`` (n-th parent) and ``~n`` (n first
parents back). Anything that does not resolve is the terminal's error.
"""

from __future__ import annotations

import re

from environments.git.tree import Tree

_REV = re.compile(r"^(?P<base>[^~^\s:]+)(?P<mods>(?:[~^]\d*)*)$")
_MOD = re.compile(r"([~^])(\d*)")
_NAME = re.compile(r"^[A-Za-z_][\w.\-]*(?:/[\w.\-]+)*$")


class GitError(Exception):
    """A command failed; the message is what the terminal prints."""


def unknown(ref: str) -> GitError:
    return GitError(
        f"fatal: ambiguous argument '{ref}': unknown revision or path not in the working tree."
    )


def base_commit(tree: Tree, name: str) -> str | None:
    """The commit a plain name points to, or None."""
    if name in ("HEAD", "head", "@"):
        return tree.head_commit
    if name in tree.branches:
        return tree.branches[name].target
    if name in tree.tags:
        return tree.tags[name]
    if name in tree.commits:
        return name
    upper = name[:1].upper() + name[1:]
    if upper in tree.commits:
        return upper
    return None


def resolve(tree: Tree, ref: str) -> str:
    """The commit id ``ref`` names in ``tree`` (GitError when it names nothing)."""
    m = _REV.match(ref)
    if m is None:
        raise unknown(ref)
    commit = base_commit(tree, m.group("base"))
    if commit is None:
        raise unknown(ref)
    for op, digits in _MOD.findall(m.group("mods")):
        n = int(digits) if digits else 1
        if op == "~":
            for _ in range(n):
                parents = tree.commits[commit].parents
                if not parents:
                    raise unknown(ref)
                commit = parents[0]
        elif n > 0:
            parents = tree.commits[commit].parents
            if len(parents) < n:
                raise unknown(ref)
            commit = parents[n - 1]
    return commit


def is_plain_name(ref: str) -> bool:
    """True when ``ref`` has no relative suffix (a name or id as typed)."""
    return "^" not in ref and "~" not in ref


def check_new_name(tree: Tree, name: str, kind: str = "branch") -> None:
    """Refuse names git (and learnGitBranching) would refuse for a new branch or tag."""
    bad = (
        not _NAME.match(name)
        or name.endswith((".", "/", ".lock"))
        or ".." in name
        or name.upper() == "HEAD"
        or name.startswith("o/")
        or re.fullmatch(r"[cC]\d+'*", name) is not None
    )
    if bad:
        raise GitError(f"fatal: '{name}' is not a valid {kind} name.")
