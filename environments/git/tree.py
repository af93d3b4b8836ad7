"""The repository state of the git puzzles, and learnGitBranching's JSON format.

A repository is a commit graph with named pointers into it, exactly as
learnGitBranching draws it: commits ``C0..Cn`` (copies made by rebase and
cherry-pick get primes, ``C1'``, ``C1''``, then ``C1'^4``), branches, tags and
HEAD, which names a branch (attached) or a commit (detached). Remote-tracking
branches live among the local branches under ``o/<name>``, and the remote
itself (learnGitBranching's ``originTree``) is a second tree of the same kind.

Commits are immutable and shared between copies of a tree, so copying a tree
(done before every command, for ``undo``) only copies three small dicts.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

_ID = re.compile(r"^C(\d+)(?:('{1,3})|'\^(\d+))?$")
REMOTE_PREFIX = "o/"


class TreeFormatError(ValueError):
    """A tree in learnGitBranching's JSON format is malformed (message says where)."""


@dataclass(frozen=True)
class Commit:
    id: str
    parents: tuple[str, ...] = ()


@dataclass(frozen=True)
class Branch:
    target: str
    #: the remote-tracking branch this local branch follows (``o/main``), if any
    tracking: str | None = None


@dataclass
class Tree:
    """One repository: commits, branches, tags and HEAD (a branch name or a commit id)."""

    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, Branch] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    head: str = "main"

    def copy(self) -> Tree:
        return Tree(dict(self.commits), dict(self.branches), dict(self.tags), self.head)

    @property
    def detached(self) -> bool:
        return self.head not in self.branches

    @property
    def head_commit(self) -> str:
        return self.branches[self.head].target if self.head in self.branches else self.head

    def ancestors(self, commit_id: str) -> set[str]:
        """``commit_id`` and every commit reachable from it through parents."""
        seen = {commit_id}
        todo = deque([commit_id])
        while todo:
            for parent in self.commits[todo.popleft()].parents:
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return seen

    def reachable(self) -> set[str]:
        """Commits reachable from any branch, tag or HEAD (what a viewer shows)."""
        roots = [b.target for b in self.branches.values()] + list(self.tags.values())
        roots.append(self.head_commit)
        seen: set[str] = set()
        for root in roots:
            if root in self.commits and root not in seen:
                seen |= self.ancestors(root)
        return seen


@dataclass
class Repo:
    """The local tree, the optional remote and the commit-id counter they share."""

    local: Tree
    origin: Tree | None = None
    #: learnGitBranching's id counter: the next new commit is the first free C<n>, n >= counter
    counter: int = 0

    def copy(self) -> Repo:
        return Repo(self.local.copy(), self.origin.copy() if self.origin else None, self.counter)

    def same_as(self, other: Repo) -> bool:
        """Exactly the same state (cheaper than comparing :func:`state_key`)."""

        def same(a: Tree | None, b: Tree | None) -> bool:
            if a is None or b is None:
                return a is b
            return (
                a.head == b.head
                and a.branches == b.branches
                and a.tags == b.tags
                and a.commits == b.commits
            )

        return (
            self.counter == other.counter
            and same(self.local, other.local)
            and same(self.origin, other.origin)
        )

    def new_id(self) -> str:
        while True:
            candidate = f"C{self.counter}"
            self.counter += 1
            if not self.has_id(candidate):
                return candidate

    def has_id(self, commit_id: str) -> bool:
        return commit_id in self.local.commits or (
            self.origin is not None and commit_id in self.origin.commits
        )

    def copy_id(self, commit_id: str) -> str:
        """The id of a rebased / cherry-picked copy: one more prime, unique in the repo."""
        new = alt_id(commit_id)
        while self.has_id(new):
            new = alt_id(new)
        return new


def alt_id(commit_id: str) -> str:
    """``C1 -> C1' -> C1'' -> C1''' -> C1'^4 -> C1'^5`` (learnGitBranching's scheme)."""
    m = _ID.match(commit_id)
    if m is None:
        return commit_id + "'"
    number, primes, power = m.groups()
    if power is not None:
        return f"C{number}'^{int(power) + 1}"
    count = len(primes or "")
    return f"C{number}" + ("'" * (count + 1) if count < 3 else "'^4")


def base_id(commit_id: str) -> str:
    """The original commit a copy stems from: ``C4''`` -> ``C4``."""
    m = _ID.match(commit_id)
    return f"C{m.group(1)}" if m else commit_id


def id_sort_key(commit_id: str) -> tuple[int, int, str]:
    """Order of creation as learnGitBranching sorts commits: number, then primes."""
    m = _ID.match(commit_id)
    if m is None:
        return (1 << 30, 0, commit_id)
    number, primes, power = m.groups()
    return (int(number), int(power) if power else len(primes or ""), commit_id)


def is_commit_id(name: str) -> bool:
    return _ID.match(name) is not None


def default_tree() -> Tree:
    """learnGitBranching's starting repository: ``C0 <- C1``, main checked out."""
    return Tree(
        commits={"C0": Commit("C0"), "C1": Commit("C1", ("C0",))},
        branches={"main": Branch("C1")},
        head="main",
    )


# --- learnGitBranching JSON ------------------------------------------------


def _obj(data: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise TreeFormatError(f"{where}: expected an object, got {type(data).__name__}")
    return data


def _target(data: Mapping[str, Any], where: str) -> str:
    target = data.get("target")
    if not isinstance(target, str) or not target:
        raise TreeFormatError(f"{where}: missing 'target'")
    return target


def load_tree(data: Any, where: str = "tree") -> Tree:
    """Parse one tree (local or origin) and check that every reference resolves."""
    data = _obj(data, where)
    commits: dict[str, Commit] = {}
    for cid, raw in _obj(data.get("commits"), f"{where}.commits").items():
        raw = _obj(raw, f"{where}.commits.{cid}")
        parents = raw.get("parents", [])
        if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
            raise TreeFormatError(f"{where}.commits.{cid}.parents: expected a list of ids")
        commits[cid] = Commit(cid, tuple(parents))
    if not commits:
        raise TreeFormatError(f"{where}: no commits")
    for commit in commits.values():
        for parent in commit.parents:
            if parent not in commits:
                raise TreeFormatError(f"{where}: commit {commit.id} has unknown parent {parent}")
    branches: dict[str, Branch] = {}
    for name, raw in _obj(data.get("branches", {}), f"{where}.branches").items():
        raw = _obj(raw, f"{where}.branches.{name}")
        target = _target(raw, f"{where}.branches.{name}")
        if target not in commits:
            raise TreeFormatError(f"{where}: branch {name} points to unknown commit {target}")
        tracking = raw.get("remoteTrackingBranchID")
        branches[name] = Branch(target, tracking if isinstance(tracking, str) else None)
    tags: dict[str, str] = {}
    for name, raw in _obj(data.get("tags") or {}, f"{where}.tags").items():
        target = _target(_obj(raw, f"{where}.tags.{name}"), f"{where}.tags.{name}")
        if target not in commits:
            raise TreeFormatError(f"{where}: tag {name} points to unknown commit {target}")
        tags[name] = target
    head = _target(_obj(data.get("HEAD"), f"{where}.HEAD"), f"{where}.HEAD")
    if head not in branches and head not in commits:
        raise TreeFormatError(f"{where}: HEAD points to unknown ref {head}")
    return Tree(commits, branches, tags, head)


def load_repo(data: Any, where: str = "tree") -> Repo:
    """Parse a full learnGitBranching tree (``originTree`` included when present)."""
    data = _obj(data, where)
    if "workingChanges" in data:
        raise TreeFormatError(f"{where}: working-directory levels (staging area) are not modelled")
    local = load_tree(data, where)
    origin = None
    if data.get("originTree") is not None:
        origin = load_tree(data["originTree"], f"{where}.originTree")
    return Repo(local, origin)


def dump_tree(tree: Tree) -> dict[str, Any]:
    """learnGitBranching's JSON for one tree (every commit, reachable or not)."""
    commits: dict[str, Any] = {}
    for cid in sorted(tree.commits, key=id_sort_key):
        entry: dict[str, Any] = {"parents": list(tree.commits[cid].parents), "id": cid}
        if not tree.commits[cid].parents:
            entry["rootCommit"] = True
        commits[cid] = entry
    return {
        "branches": {
            name: {"target": b.target, "id": name, "remoteTrackingBranchID": b.tracking}
            for name, b in tree.branches.items()
        },
        "commits": commits,
        "tags": {name: {"target": t, "id": name, "type": "tag"} for name, t in tree.tags.items()},
        "HEAD": {"target": tree.head, "id": "HEAD"},
    }


def dump_repo(repo: Repo) -> dict[str, Any]:
    out = dump_tree(repo.local)
    if repo.origin is not None:
        out["originTree"] = dump_tree(repo.origin)
    return out


# --- the compact view shown to the agent -----------------------------------


def compact_tree(tree: Tree) -> dict[str, Any]:
    """A terse view of one tree: reachable commits with parents, refs, HEAD."""
    shown = sorted(tree.reachable(), key=id_sort_key)
    out: dict[str, Any] = {
        "commits": {cid: list(tree.commits[cid].parents) for cid in shown},
        "branches": {name: b.target for name, b in tree.branches.items()},
    }
    if tree.tags:
        out["tags"] = dict(tree.tags)
    out["HEAD"] = tree.head
    tracking = {name: b.tracking for name, b in tree.branches.items() if b.tracking}
    if tracking:
        out["tracking"] = tracking
    return out


def compact(repo: Repo) -> dict[str, Any]:
    """The agent's view of a repository: :func:`compact_tree`, plus ``origin``."""
    out = compact_tree(repo.local)
    if repo.origin is not None:
        out["origin"] = compact_tree(repo.origin)
    return out


def state_key(repo: Repo) -> tuple[Any, ...]:
    """Exact identity of a repository state (all commits, refs and the id counter)."""

    def one(tree: Tree | None) -> tuple[Any, ...]:
        if tree is None:
            return ()
        return (
            frozenset(tree.commits.values()),
            frozenset(tree.branches.items()),
            frozenset(tree.tags.items()),
            tree.head,
        )

    return (one(repo.local), one(repo.origin), repo.counter)


def view_key(repo: Repo) -> tuple[Any, ...]:
    """What the agent can see changed: reachable graph and refs (not orphans, not counter)."""

    def one(tree: Tree | None) -> tuple[Any, ...]:
        if tree is None:
            return ()
        return (
            frozenset(tree.commits[c] for c in tree.reachable()),
            frozenset(tree.branches.items()),
            frozenset(tree.tags.items()),
            tree.head,
        )

    return (one(repo.local), one(repo.origin))


def remote_name(local_name: str) -> str | None:
    """``o/main`` -> ``main``; None for a local branch."""
    return local_name[len(REMOTE_PREFIX) :] if local_name.startswith(REMOTE_PREFIX) else None


def copy_commits(source: Tree, dest: Tree, tips: Iterable[str]) -> list[str]:
    """Copy every commit reachable from ``tips`` that ``dest`` lacks; returns the new ids."""
    added: list[str] = []
    for tip in tips:
        for cid in source.ancestors(tip):
            if cid not in dest.commits:
                dest.commits[cid] = source.commits[cid]
                added.append(cid)
    return sorted(added, key=id_sort_key)
