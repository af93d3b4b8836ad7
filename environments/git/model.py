"""An in-memory git in the style of learnGitBranching: one command line in, terminal text out.

:class:`GitModel` holds a :class:`~environments.git.tree.Repo` and applies
commands to it with learnGitBranching's semantics: ``git commit`` makes the
next free ``C<n>``, ``rebase`` and ``cherry-pick`` make primed copies
(``C2'``), a merge that can fast-forward does, ``checkout`` of anything but a
local branch detaches HEAD, and so on. A command either succeeds completely or
leaves the repository untouched; a malformed or unsupported command gets the
answer a terminal would give, never an exception. ``undo`` (a learnGitBranching
command, not git's) takes back the last command that changed something.

The remote commands live in :mod:`environments.git.remote`, the ones that copy
commits (rebase, cherry-pick, revert) in :mod:`environments.git.history`, the
ones that only read (status, log, describe) in :mod:`environments.git.reading`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar

import structlog

from environments.git import history, reading, remote
from environments.git.args import parse, split_line
from environments.git.refs import GitError, check_new_name, resolve
from environments.git.tree import Branch, Commit, Repo, Tree

log = structlog.get_logger(__name__)

SUPPORTED: tuple[str, ...] = (
    "commit",
    "branch",
    "checkout",
    "switch",
    "merge",
    "rebase",
    "cherry-pick",
    "reset",
    "revert",
    "tag",
    "fetch",
    "pull",
    "push",
    "clone",
    "fakeTeamwork",
    "status",
    "log",
    "describe",
)


@dataclass(frozen=True)
class Result:
    """The terminal's answer to one command line."""

    output: str
    ok: bool
    changed: bool


def normalise(line: str) -> str:
    """The command as typed: without surrounding backticks, a shell prompt or blank edges."""
    text = line.strip().strip("`").strip()
    if text.startswith("$ "):
        text = text[2:].strip()
    return text


class GitModel:
    """A repository plus the commands that change it."""

    def __init__(self, repo: Repo, disabled: Iterable[str] = ()) -> None:
        self.repo = repo
        self.disabled = frozenset(" ".join(d.split()) for d in disabled)
        self._undo: list[Repo] = []

    #: subcommand -> method name (a class-level table: models are cloned by the thousand)
    _COMMANDS: ClassVar[dict[str, str]] = {
        "commit": "_commit",
        "branch": "_branch",
        "checkout": "_checkout",
        "switch": "_switch",
        "merge": "_merge",
        "rebase": "_rebase",
        "cherry-pick": "_cherry_pick",
        "reset": "_reset",
        "revert": "_revert",
        "tag": "_tag",
        "status": "_status",
        "log": "_log",
        "describe": "_describe",
        "fetch": "_fetch",
        "pull": "_pull",
        "push": "_push",
        "clone": "_clone",
        "fakeTeamwork": "_fake_teamwork",
    }

    @property
    def tree(self) -> Tree:
        return self.repo.local

    @property
    def can_undo(self) -> int:
        return len(self._undo)

    def clone(self) -> GitModel:
        """An independent copy (undo history included) for trying commands out."""
        other = GitModel(self.repo.copy())
        other.disabled = self.disabled
        other._undo = list(self._undo)  # snapshots are never mutated, so sharing is safe
        return other

    # --- running -----------------------------------------------------------

    def run(self, line: str) -> Result:
        """Apply one command line; on any error the repository is left as it was."""
        text = normalise(line)
        if " ".join(text.split()) in ("undo", "git undo"):
            if not self._undo:
                return Result("error: nothing to undo", ok=False, changed=False)
            self.repo = self._undo.pop().copy()
            return Result("Undid the last command.", ok=True, changed=True)
        before = self.repo.copy()
        try:
            output = self._dispatch(text)
        except GitError as exc:
            self.repo = before
            return Result(str(exc), ok=False, changed=False)
        except Exception as exc:  # a model bug must cost a round, not the episode
            log.warning("git model failed", command=text, error=repr(exc))
            self.repo = before
            return Result(f"error: this command could not be carried out ({exc})", False, False)
        changed = not before.same_as(self.repo)
        if changed:
            self._undo.append(before)
        return Result(output, ok=True, changed=changed)

    def _dispatch(self, text: str) -> str:
        if not text:
            raise GitError("error: empty command")
        if "\n" in text:
            raise GitError("error: one command per action, please (got several lines)")
        if ";" in text or "&&" in text or "||" in text:
            raise GitError("error: one command per action, please (no ';' or '&&' chains)")
        words = split_line(text)
        if not words:
            raise GitError("error: empty command")
        if words[0] != "git":
            raise GitError(f"bash: {words[0]}: command not found")
        if len(words) == 1:
            raise GitError("usage: git <command> [<args>]\ncommands: " + ", ".join(SUPPORTED))
        sub = words[1]
        method = self._COMMANDS.get(sub)
        if method is None:
            known = sub in ("add", "restore", "stash", "bisect", "diff", "show")
            if known:
                raise GitError(f"git: '{sub}' is not available in this puzzle")
            raise GitError(f"git: '{sub}' is not a git command. See 'git --help'.")
        if f"git {sub}" in self.disabled:
            raise GitError(f"error: the command 'git {sub}' is disabled for this level")
        handler: Callable[[list[str]], str] = getattr(self, method)
        return handler(words[2:])

    def _fetch(self, words: list[str]) -> str:
        return remote.fetch(self, words)

    def _pull(self, words: list[str]) -> str:
        return remote.pull(self, words)

    def _push(self, words: list[str]) -> str:
        return remote.push(self, words)

    def _clone(self, words: list[str]) -> str:
        return remote.clone(self, words)

    def _fake_teamwork(self, words: list[str]) -> str:
        return remote.fake_teamwork(self, words)

    # --- helpers shared with the remote commands -----------------------------

    def new_commit(self, parents: list[str], commit_id: str | None = None) -> str:
        cid = commit_id or self.repo.new_id()
        self.tree.commits[cid] = Commit(cid, tuple(parents))
        return cid

    def move_head(self, commit: str) -> None:
        """Move what HEAD stands for: its branch when attached, HEAD itself when detached."""
        tree = self.tree
        if tree.detached:
            tree.head = commit
        else:
            tree.branches[tree.head] = Branch(commit, tree.branches[tree.head].tracking)

    def where(self) -> str:
        return "detached HEAD" if self.tree.detached else self.tree.head

    def checkout_ref(self, ref: str) -> str:
        """learnGitBranching's checkout: local branches attach, anything else detaches."""
        tree = self.tree
        if ref in ("HEAD", "head", "@"):
            return "Already on HEAD"
        if ref in tree.branches and not ref.startswith("o/"):
            if tree.head == ref:
                return f"Already on '{ref}'"
            tree.head = ref
            return f"Switched to branch '{ref}'"
        commit = resolve(tree, ref)
        tree.head = commit
        return (
            f"Note: switching to '{ref}'.\nYou are in 'detached HEAD' state.\n"
            f"HEAD is now at {commit}"
        )

    def make_branch(self, name: str, ref: str) -> str:
        tree = self.tree
        check_new_name(tree, name)
        if name in tree.branches:
            raise GitError(f"fatal: a branch named '{name}' already exists")
        commit = resolve(tree, ref)
        tracking = ref if ref.startswith("o/") and ref in tree.branches else None
        tree.branches[name] = Branch(commit, tracking)
        return tracking or ""

    # --- local commands ------------------------------------------------------

    def _commit(self, words: list[str]) -> str:
        args = parse(
            "commit",
            words,
            frozenset({"--amend", "-a", "--all", "--allow-empty", "--no-edit"}),
            frozenset({"-m", "-am", "--message"}),
            "git commit [-m <msg>] [--amend]",
        )
        args.expect(0, 0, "git commit [-m <msg>] [--amend]")
        tree = self.tree
        head = tree.head_commit
        if args.has("--amend"):
            parents = list(tree.commits[head].parents)
            if not parents:
                raise GitError("fatal: cannot amend the root commit here")
            cid = self.new_commit(parents, self.repo.copy_id(head))
        else:
            cid = self.new_commit([head])
        self.move_head(cid)
        return f"[{self.where()} {cid}] new commit"

    def _branch(self, words: list[str]) -> str:
        usage = (
            "git branch [-f] <name> [<start-point>] | git branch -d <name> | "
            "git branch -u <upstream> [<name>]"
        )
        args = parse(
            "branch",
            words,
            frozenset({"-f", "--force", "-d", "-D", "--delete", "-a", "-r", "--all", "--list"}),
            frozenset({"-u", "--set-upstream-to"}),
            usage,
        )
        tree = self.tree
        if args.has("-u", "--set-upstream-to"):
            upstream = args.flags.get("-u") or args.flags.get("--set-upstream-to", "")
            (name,) = args.expect(0, 1, usage) or [self._current_branch()]
            if upstream not in tree.branches or not upstream.startswith("o/"):
                raise GitError(f"error: the requested upstream branch '{upstream}' does not exist")
            if name not in tree.branches or name.startswith("o/"):
                raise GitError(f"fatal: branch '{name}' does not exist")
            tree.branches[name] = Branch(tree.branches[name].target, upstream)
            return f"branch '{name}' set up to track '{upstream}'."
        if args.has("-d", "-D", "--delete"):
            names = args.expect(1, 99, usage)
            out = []
            for name in names:
                if name not in tree.branches:
                    raise GitError(f"error: branch '{name}' not found.")
                if name.startswith("o/"):
                    raise GitError(
                        f"error: '{name}' is a remote-tracking branch; "
                        f"use git push origin :{name[2:]}"
                    )
                if tree.head == name:
                    raise GitError(f"error: cannot delete branch '{name}' checked out")
                out.append(f"Deleted branch {name} (was {tree.branches.pop(name).target}).")
            return "\n".join(out)
        if args.has("-f", "--force"):
            name, *rest = args.expect(1, 2, usage)
            ref = rest[0] if rest else "HEAD"
            commit = resolve(tree, ref)
            if name.startswith("o/"):
                raise GitError(f"fatal: cannot force-move remote-tracking branch '{name}'")
            if name not in tree.branches:
                self.make_branch(name, ref)
            else:
                tree.branches[name] = Branch(commit, tree.branches[name].tracking)
            return f"branch '{name}' now points to {commit}"
        if not args.positional:
            names = sorted(tree.branches, key=lambda n: (n.startswith("o/"), n))
            return "\n".join(("* " if n == tree.head else "  ") + n for n in names)
        name, *rest = args.expect(1, 2, usage)
        ref = rest[0] if rest else "HEAD"
        tracking = self.make_branch(name, ref)
        note = f" (tracking '{tracking}')" if tracking else ""
        return f"Created branch '{name}' at {tree.branches[name].target}{note}"

    def _current_branch(self) -> str:
        if self.tree.detached:
            raise GitError("fatal: HEAD is detached; you are not on a branch")
        return self.tree.head

    def _checkout(self, words: list[str]) -> str:
        usage = "git checkout <branch|commit> | git checkout -b <new-branch> [<start-point>]"
        args = parse(
            "checkout", words, frozenset({"-b", "-B", "--detach", "-f", "--force"}), usage=usage
        )
        if args.has("-b", "-B"):
            name, *rest = args.expect(1, 2, usage)
            ref = rest[0] if rest else "HEAD"
            if args.has("-B") and name in self.tree.branches and not name.startswith("o/"):
                self.tree.branches[name] = Branch(resolve(self.tree, ref), None)
            else:
                self.make_branch(name, ref)
            self.tree.head = name
            return f"Switched to a new branch '{name}'"
        (ref,) = args.expect(1, 1, usage)
        if args.has("--detach"):
            self.tree.head = resolve(self.tree, ref)
            return f"HEAD is now at {self.tree.head}"
        try:
            return self.checkout_ref(ref)
        except GitError:
            raise GitError(
                f"error: pathspec '{ref}' did not match any file(s) known to git"
            ) from None

    def _switch(self, words: list[str]) -> str:
        usage = (
            "git switch <branch> | git switch -c <new-branch> [<start-point>] | "
            "git switch --detach <commit>"
        )
        args = parse(
            "switch", words, frozenset({"-c", "-C", "--create", "--detach", "-d"}), usage=usage
        )
        if args.has("-c", "-C", "--create"):
            return self._checkout(["-B" if args.has("-C") else "-b", *args.positional])
        (ref,) = args.expect(1, 1, usage)
        if args.has("--detach", "-d"):
            return self._checkout(["--detach", ref])
        tree = self.tree
        if ref in tree.branches and not ref.startswith("o/"):
            return self.checkout_ref(ref)
        if ref in tree.branches:
            raise GitError(f"fatal: a branch is expected, got remote branch '{ref}'")
        resolve(tree, ref)
        raise GitError(
            f"fatal: a branch is expected, got '{ref}'\nhint: use 'git switch --detach {ref}'"
        )

    def _merge(self, words: list[str]) -> str:
        usage = "git merge [--no-ff] <branch>"
        args = parse("merge", words, frozenset({"--no-ff", "--ff"}), frozenset({"-m"}), usage)
        (ref,) = args.expect(1, 1, usage)
        return self.merge_into_head(ref, no_ff=args.has("--no-ff"))

    def merge_into_head(self, ref: str, no_ff: bool = False) -> str:
        tree = self.tree
        theirs = resolve(tree, ref)
        ours = tree.head_commit
        if theirs in tree.ancestors(ours):
            return "Already up to date."
        if ours in tree.ancestors(theirs) and not no_ff:
            self.move_head(theirs)
            return f"Updating {ours}..{theirs}\nFast-forward"
        cid = self.new_commit([ours, theirs])
        self.move_head(cid)
        return f"Merge made by the 'ort' strategy: {cid} (parents {ours}, {theirs})"

    def _rebase(self, words: list[str]) -> str:
        usage = "git rebase <upstream> [<branch>]"
        args = parse("rebase", words, frozenset({"-i", "--interactive"}), usage=usage)
        if args.has("-i", "--interactive"):
            raise GitError("error: interactive rebase is not available in this puzzle")
        positional = args.expect(0, 2, usage)
        if not positional:
            branch = self._current_branch()
            tracking = self.tree.branches[branch].tracking
            if tracking is None:
                raise GitError("fatal: There is no tracking information for the current branch.")
            positional = [tracking]
        return self.rebase(positional[0], positional[1] if len(positional) > 1 else None)

    def rebase(self, upstream: str, branch: str | None) -> str:
        """learnGitBranching's rebase: copy the commits only ``branch`` has onto ``upstream``."""
        return history.rebase(self, upstream, branch)

    def _cherry_pick(self, words: list[str]) -> str:
        return history.cherry_pick(self, words)

    def _reset(self, words: list[str]) -> str:
        usage = "git reset [--hard|--mixed|--soft] <commit>"
        args = parse("reset", words, frozenset({"--hard", "--mixed", "--soft"}), usage=usage)
        (ref,) = args.expect(1, 1, usage)
        commit = resolve(self.tree, ref)
        self.move_head(commit)
        return f"HEAD is now at {commit}"

    def _revert(self, words: list[str]) -> str:
        return history.revert(self, words)

    def _tag(self, words: list[str]) -> str:
        usage = "git tag <name> [<commit>] | git tag -d <name>"
        args = parse(
            "tag", words, frozenset({"-d", "--delete", "-a", "-f"}), frozenset({"-m"}), usage
        )
        tree = self.tree
        if args.has("-d", "--delete"):
            (name,) = args.expect(1, 1, usage)
            if name not in tree.tags:
                raise GitError(f"error: tag '{name}' not found.")
            return f"Deleted tag '{name}' (was {tree.tags.pop(name)})"
        if not args.positional:
            return "\n".join(sorted(tree.tags))
        name, *rest = args.expect(1, 2, usage)
        check_new_name(tree, name, "tag")
        if name in tree.tags and not args.has("-f"):
            raise GitError(f"fatal: tag '{name}' already exists")
        tree.tags[name] = resolve(tree, rest[0] if rest else "HEAD")
        return f"Tagged {tree.tags[name]} as '{name}'"

    # --- commands that only read (environments.git.reading) ------------------

    def _status(self, words: list[str]) -> str:
        return reading.status(self.tree, words)

    def _log(self, words: list[str]) -> str:
        return reading.log(self.tree, words)

    def _describe(self, words: list[str]) -> str:
        return reading.describe(self.tree, words)
