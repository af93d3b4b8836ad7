"""The git specialisation of the four PRAF prompts (``Environment.guide``).

The modules stay generic; this text tells them what the world is (a tree of
commits drawn as JSON), what the goal means, which commands exist and the
exact action syntax: one git command per action in an ``action`` fence.
"""

from __future__ import annotations

from agentbus import env_guide

SYSTEM = """\
Domain: a git branching puzzle in the style of learnGitBranching. The repository
is an in-memory commit graph shown as compact JSON:
  "commits": {"C1": ["C0"], ...}  each commit with its parent ids (a merge has two),
  "branches": {"main": "C1", ...} where each branch points,
  "tags": {...}, "HEAD": a branch name (attached) or a commit id (detached),
  "tracking": which local branch follows which remote-tracking branch (o/main),
  "origin": the remote repository, when there is one.
New commits are numbered C<n> in order; copies made by rebase, cherry-pick,
revert or commit --amend get primes (C2', C2''). The puzzle is solved when HEAD,
every branch of the goal (with its commit history and tracking), the tags and,
if present, the remote match the goal tree exactly, commit ids included.

Commands (one per action):
  git commit [--amend]                    git branch <name> [<ref>]
  git branch -f <name> <ref>              git branch -d <name>
  git branch -u o/<branch> [<name>]       git checkout <branch|ref>
  git checkout -b <name> [<ref>]          git switch [-c] <branch>
  git merge <ref>                         git rebase <upstream> [<branch>]
  git cherry-pick <ref>...                git reset <ref>
  git revert <ref>...                     git tag <name> [<ref>]
  git fetch [origin [<src>[:<dst>]]]      git pull [--rebase] [origin [<src>[:<dst>]]]
  git push [origin [<src>[:<dst>]]]       git clone, git fakeTeamwork [<branch>] [<n>]
  git status, git log, git describe       undo   (takes back the last command)
A <ref> is a branch, tag, commit id, HEAD, o/<branch>, or a relative ref:
  main^ (parent), main^2 (second parent of a merge), HEAD~3 (three parents back).
Checking out anything but a local branch detaches HEAD. rebase copies the commits
that are only on the branch onto <upstream> and moves the branch to the copies."""

PLANNING = """\
Compare the current tree with the goal tree and write the plan as numbered steps,
one git command per step, each command in backticks (e.g. 1. `git checkout -b
bugFix`). Mind the commit ids: the next new commit gets the next free number, so
the order of the commands matters."""

REASONING = """\
Read the latest tree (the last Feedback, else the Observation), compare it with the
goal and decide the single next git command. Name it exactly once in backticks,
e.g. "Next command: `git rebase main`", and say briefly what it will change."""

ACTION = """\
Action syntax: exactly one git command, as it would be typed in a terminal, in
one fence and nothing else, for example:
```action
git rebase main
```
No shell prompt, no comments, no second command, no ';' or '&&'."""

REFLECTION = """\
Use the terminal's answer and the tree in the feedback to find why the last
commands did not move the tree towards the goal (an error, a wrong branch or ref,
a command that changed nothing). Then name the command to run next in backticks;
`undo` takes back a command that made things worse."""


def git_guide() -> dict[str, str]:
    return env_guide(
        system=SYSTEM,
        planning=PLANNING,
        reasoning=REASONING,
        action=ACTION,
        reflection=REFLECTION,
    )
