"""The commands that only read the repository: status, log and describe.

They never change a commit or a ref, so they need nothing but the local
:class:`~environments.git.tree.Tree`; keeping them here leaves the model with
the commands that change history.
"""

from __future__ import annotations

from environments.git.args import parse
from environments.git.refs import GitError, resolve
from environments.git.tree import Tree, id_sort_key


def status(tree: Tree, words: list[str]) -> str:
    parse("status", words, frozenset({"-s", "--short"})).expect(0, 0, "git status")
    if tree.detached:
        return f"HEAD detached at {tree.head}\nnothing to commit, working tree clean"
    line = f"On branch {tree.head}"
    tracking = tree.branches[tree.head].tracking
    if tracking:
        line += f"\nYour branch tracks '{tracking}'."
    return line + "\nnothing to commit, working tree clean"


def log(tree: Tree, words: list[str]) -> str:
    args = parse("log", words, frozenset({"--oneline", "--graph", "--all"}))
    (ref,) = args.expect(0, 1, "git log [<commit>]") or ["HEAD"]
    commit: str | None = resolve(tree, ref)
    lines: list[str] = []
    while commit is not None and len(lines) < 20:
        parents = tree.commits[commit].parents
        lines.append(
            f"{commit}" + (f" (merge of {', '.join(parents)})" if len(parents) > 1 else "")
        )
        commit = parents[0] if parents else None
    return "\n".join(lines)


def describe(tree: Tree, words: list[str]) -> str:
    """learnGitBranching's describe: ``<tag>_<distance>_g<commit>`` from the nearest tag."""
    args = parse("describe", words, frozenset())
    (ref,) = args.expect(0, 1, "git describe [<ref>]") or ["HEAD"]
    start = resolve(tree, ref)
    by_commit: dict[str, str] = {}
    for name, commit in sorted(tree.tags.items()):
        by_commit.setdefault(commit, name)
    frontier, seen, distance = [start], {start}, 0
    while frontier:
        for commit in sorted(frontier, key=id_sort_key):
            if commit in by_commit:
                tag = by_commit[commit]
                return tag if distance == 0 else f"{tag}_{distance}_g{start}"
        nxt = []
        for commit in frontier:
            for parent in tree.commits[commit].parents:
                if parent not in seen:
                    seen.add(parent)
                    nxt.append(parent)
        frontier, distance = nxt, distance + 1
    raise GitError(f"fatal: No tags can describe '{start}'.")
