"""Seeded puzzles at graded difficulty, solvable by construction.

A puzzle is made by building a random start repository, applying a random
sequence of commands to it and keeping the result as the goal and the
sequence as the recorded solution. Difficulty (1-5) sets the size of the start
tree, the number of commands and which commands may appear:

1. commit, branch, checkout, checkout -b (1-2 commands)
2. + merge, tag, detaching checkouts with relative refs (2-3)
3. + rebase, cherry-pick, branch -f (2-4)
4. + reset, revert, ``rebase A B`` (3-5)
5. a remote: fetch, pull, pull --rebase, push, with the above (3-5)

A sequence is kept only when every command succeeds and visibly changes the
tree, no prefix of it already matches the goal, and every commit it creates
is still visible in the goal (so ids never have to be guessed).

A run's difficulties come in 30-task blocks, each 1-5 six times in a seeded
order, so every prefix of a run samples the truth table's mix; each puzzle
is drawn from its own random stream (seed, index), so a longer run keeps
the puzzles of a shorter one.
"""

from __future__ import annotations

import random

from environments.git.compare import matches
from environments.git.levels import Puzzle
from environments.git.model import GitModel
from environments.git.tree import Branch, Commit, Repo, Tree, id_sort_key, view_key
from environments.task_order import kind_at

BRANCH_NAMES = ("bugFix", "side", "feature", "topic", "hotfix", "dev")
TAG_NAMES = ("v0", "v1", "v2")
DIFFICULTIES = (1, 2, 3, 4, 5)
STEPS = {1: (1, 2), 2: (2, 3), 3: (2, 4), 4: (3, 5), 5: (3, 5)}
COMMANDS = {
    1: ("commit", "branch", "checkout", "checkout-b"),
    2: ("commit", "branch", "checkout", "checkout-b", "merge", "tag", "detach"),
    3: ("commit", "checkout", "checkout-b", "merge", "rebase", "cherry-pick", "branch-f"),
    4: (
        "commit",
        "checkout",
        "merge",
        "rebase",
        "rebase2",
        "cherry-pick",
        "branch-f",
        "reset",
        "revert",
        "detach",
    ),
    5: (
        "commit",
        "checkout",
        "checkout-b",
        "fetch",
        "pull",
        "pull-rebase",
        "push",
        "merge",
        "rebase",
    ),
}


def _start(rng: random.Random, difficulty: int) -> Repo:
    commits = {"C0": Commit("C0")}
    main = ["C0"]
    for i in range(1, rng.randint(1, 2 + difficulty // 2) + 1):
        commits[f"C{i}"] = Commit(f"C{i}", (main[-1],))
        main.append(f"C{i}")
    tree = Tree(commits, {"main": Branch(main[-1])}, {}, "main")
    sides = (
        0 if difficulty == 1 else rng.randint(1 if difficulty >= 3 else 0, min(2, difficulty - 1))
    )
    names = rng.sample(BRANCH_NAMES, 3)
    for name in names[:sides]:
        tip = rng.choice(main[:-1] or main)
        for _ in range(rng.randint(1, 2)):
            cid = f"C{len(tree.commits)}"
            tree.commits[cid] = Commit(cid, (tip,))
            tip = cid
        tree.branches[name] = Branch(tip)
    if sides and rng.random() < 0.5:
        tree.head = rng.choice([n for n in tree.branches if n != "main"])
    repo = Repo(tree)
    if difficulty == 5:
        origin = Tree(dict(tree.commits), {"main": Branch(main[-1])}, {}, "main")
        tip = main[-1]
        for _ in range(rng.randint(1, 2)):
            cid = repo.new_id()
            origin.commits[cid] = Commit(cid, (tip,))
            tip = cid
        origin.branches["main"] = Branch(tip)
        tree.branches["o/main"] = Branch(main[-1])
        tree.branches["main"] = Branch(main[-1], "o/main")
        repo.origin = origin
        repo.counter = 0
    return repo


def _refs(tree: Tree) -> list[str]:
    return sorted(n for n in tree.branches if not n.startswith("o/"))


def _candidate(rng: random.Random, model: GitModel, kind: str) -> str | None:
    tree = model.tree
    branches = _refs(tree)
    others = [b for b in branches if b != tree.head]
    fresh = [n for n in BRANCH_NAMES if n not in tree.branches]
    visible = sorted(tree.reachable(), key=id_sort_key)
    head_history = tree.ancestors(tree.head_commit)
    if kind == "commit":
        return "git commit"
    if kind == "branch" and fresh:
        where = rng.choice(["", "", *others, *[f"{b}^" for b in branches]])
        return f"git branch {rng.choice(fresh)} {where}".strip()
    if kind == "checkout" and others:
        return f"git checkout {rng.choice(others)}"
    if kind == "checkout-b" and fresh:
        where = rng.choice(["", "", *others, *(["o/main"] if "o/main" in tree.branches else [])])
        return f"git checkout -b {rng.choice(fresh)} {where}".strip()
    if kind == "merge" and others:
        return f"git merge {rng.choice(others + (['o/main'] if 'o/main' in tree.branches else []))}"
    if kind == "tag":
        free = [t for t in TAG_NAMES if t not in tree.tags]
        if free:
            return f"git tag {free[0]} {rng.choice([*branches, *[b + '^' for b in branches]])}"
    if kind == "detach":
        rel = [b + "^" for b in branches] + [b + "~2" for b in branches]
        return f"git checkout {rng.choice([*rel, *visible])}"
    if kind == "rebase":
        targets = others + (["o/main"] if "o/main" in tree.branches else [])
        if targets:
            return f"git rebase {rng.choice(targets)}"
    if kind == "rebase2" and len(branches) >= 2:
        a, b = rng.sample(branches, 2)
        return f"git rebase {a} {b}"
    if kind == "cherry-pick":
        foreign = [c for c in visible if c not in head_history]
        if foreign:
            picks = rng.sample(foreign, min(len(foreign), rng.randint(1, 2)))
            return "git cherry-pick " + " ".join(sorted(picks, key=id_sort_key))
    if kind == "branch-f" and others:
        return f"git branch -f {rng.choice(others)} {rng.choice([*branches, *visible, 'HEAD~1'])}"
    if kind == "reset":
        return f"git reset {rng.choice(['HEAD~1', 'HEAD^', 'HEAD~2', *others])}"
    if kind == "revert":
        return "git revert HEAD"
    if kind == "fetch":
        return "git fetch"
    if kind == "pull":
        return "git pull"
    if kind == "pull-rebase":
        return "git pull --rebase"
    if kind == "push":
        return "git push"
    return None


def _sequence(rng: random.Random, start: Repo, difficulty: int) -> list[str] | None:
    model = GitModel(start.copy())
    low, high = STEPS[difficulty]
    length = rng.randint(low, high)
    commands: list[str] = []
    for _ in range(length):
        for _attempt in range(20):
            kind = rng.choice(COMMANDS[difficulty])
            if (
                commands
                and kind in ("checkout", "detach")
                and commands[-1].startswith("git checkout")
            ):
                continue
            command = _candidate(rng, model, kind)
            if command is None:
                continue
            before = view_key(model.repo)
            result = model.run(command)
            if not result.ok:
                continue
            if view_key(model.repo) == before:
                if result.changed:  # an invisible change (e.g. the id counter): take it back
                    model.run("undo")
                continue
            commands.append(command)
            break
        else:
            return None
    return commands


def _acceptable(start: Repo, goal: Repo, commands: list[str]) -> bool:
    created = set(goal.local.commits) - set(start.local.commits)
    if not created <= goal.local.reachable():
        return False
    model = GitModel(start.copy())
    for command in commands[:-1]:
        if matches(model.repo, goal):
            return False
        model.run(command)
    return not matches(model.repo, goal)


def make_puzzle(rng: random.Random, difficulty: int, puzzle_id: str) -> Puzzle:
    """One puzzle of ``difficulty`` (1-5), drawn from ``rng``."""
    while True:
        start = _start(rng, difficulty)
        commands = _sequence(rng, start, difficulty)
        if commands is None:
            continue
        goal = GitModel(start.copy())
        for command in commands:
            goal.run(command)
        if _acceptable(start, goal.repo, commands):
            return Puzzle(
                id=puzzle_id,
                name=f"generated puzzle, difficulty {difficulty}",
                start=start,
                goal=goal.repo,
                solution=commands,
                difficulty=difficulty,
            )


def difficulty_at(seed: int, index: int) -> int:
    """Puzzle ``index``'s difficulty: 1-5, each 6 times per 30-task block in a seeded order.

    Any first T puzzles are a random sample of the truth table's mix (see
    :mod:`environments.task_order`); the old ``1 + i mod 5`` gave a 3-task
    run difficulties 1-3 only.
    """
    return kind_at(DIFFICULTIES, "git", seed, index)


def generate(count: int, seed: int = 0) -> list[Puzzle]:
    """``count`` puzzles in :func:`difficulty_at`'s order, each from its own stream (seed, i)."""
    return [
        make_puzzle(
            random.Random(f"git-puzzles:{seed}:{i}"), difficulty_at(seed, i), f"gen-{seed}-{i:03d}"
        )
        for i in range(count)
    ]
