"""Realistic wrong git commands, for the simulator's wrong plans, thoughts and actions.

Two kinds, as real models make them:

- *conceptual* mistakes (:func:`wrong_command`): the related but wrong command
  (merge for rebase, reset for revert, fetch for pull), a wrong branch or
  commit as argument, an off-by-one relative ref, swapped rebase arguments.
  Preferably ones that run and change the tree, so following them does harm.
- *slips* (:func:`slip`): a mistyped branch name, a misspelt subcommand, a
  dropped ``git``; the terminal rejects them and a round is lost.
"""

from __future__ import annotations

import random
import re

from environments.git.model import GitModel
from environments.git.tree import id_sort_key, state_key

RELATED: dict[str, tuple[str, ...]] = {
    "rebase": ("merge", "cherry-pick"),
    "merge": ("rebase", "cherry-pick"),
    "cherry-pick": ("merge", "rebase"),
    "reset": ("revert", "checkout"),
    "revert": ("reset",),
    "checkout": ("merge", "reset", "rebase"),
    "branch": ("checkout",),
    "pull": ("fetch", "pull --rebase"),
    "fetch": ("pull",),
    "push": ("pull", "fetch"),
    "commit": ("commit --amend",),
    "tag": ("branch",),
}


def _names(model: GitModel) -> list[str]:
    tree = model.tree
    branches = sorted(tree.branches)
    commits = sorted(tree.reachable(), key=id_sort_key)[-4:]
    return branches + commits + ["HEAD~1"]


def variants(model: GitModel, command: str) -> list[str]:
    """Commands a model might confuse with ``command`` in this state."""
    words = command.split()
    if not words or words[0] != "git" or len(words) < 2:
        return ["git reset HEAD~1", "git checkout main", "git commit"]
    sub, args = words[1], words[2:]
    out: list[str] = []
    names = _names(model)
    for i, arg in enumerate(args):
        if arg.startswith("-"):
            continue
        for name in names:
            if name != arg:
                out.append(" ".join(["git", sub, *args[:i], name, *args[i + 1 :]]))
        m = re.fullmatch(r"(.+)~(\d+)", arg)
        if m:
            for n in (int(m.group(2)) - 1, int(m.group(2)) + 1):
                if n > 0:
                    out.append(
                        " ".join(["git", sub, *args[:i], f"{m.group(1)}~{n}", *args[i + 1 :]])
                    )
        if arg.endswith("^"):
            out.append(" ".join(["git", sub, *args[:i], arg + "^", *args[i + 1 :]]))
            out.append(" ".join(["git", sub, *args[:i], arg.rstrip("^"), *args[i + 1 :]]))
    positional = [a for a in args if not a.startswith("-")]
    if sub == "rebase" and len(positional) == 2:
        out.append(f"git rebase {positional[1]} {positional[0]}")
    if sub == "cherry-pick" and len(positional) > 1:
        out.append("git cherry-pick " + " ".join(reversed(positional)))
        out.append("git cherry-pick " + " ".join(positional[:-1]))
    for other in RELATED.get(sub, ()):
        out.append(" ".join(["git", other, *args]).strip())
    return out


def wrong_command(model: GitModel, correct: str, rng: random.Random) -> str:
    """A plausible command with a different outcome than ``correct`` (harmful if possible)."""

    def outcome(command: str) -> tuple[bool, bool, tuple[object, ...]]:
        trial = model.clone()
        result = trial.run(command)
        return result.ok, result.changed, state_key(trial.repo)

    right = outcome(correct)[2]
    options = list(dict.fromkeys(variants(model, correct)))
    rng.shuffle(options)
    fallback = None
    for option in options[:40]:
        ok, changed, after = outcome(option)
        if after == right:
            continue
        if ok and changed:
            return option
        fallback = fallback or option
    return fallback or slip(correct, rng)


def slip(command: str, rng: random.Random) -> str:
    """A careless version of ``command`` that the terminal will reject."""
    words = command.split()
    if len(words) < 2 or words[0] != "git":
        return "git undo-last"
    kinds = ["case", "spelling", "nogit"]
    if len(words) < 3:
        kinds.remove("case")
    kind = rng.choice(kinds)
    if kind == "case":
        arg = words[-1]
        changed = arg.lower() if arg != arg.lower() else arg.capitalize()
        if changed != arg and not re.fullmatch(r"[cC]\d+'*", arg):
            return " ".join([*words[:-1], changed])
        return " ".join([*words[:-1], arg + "x"])
    if kind == "spelling":
        sub = words[1]
        broken = sub[0] + sub[2:] if len(sub) > 3 else sub + sub[-1]
        return " ".join(["git", broken, *words[2:]])
    return " ".join(words[1:])
