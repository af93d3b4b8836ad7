"""What the remote and history commands need of a repository model (a structural type).

:mod:`environments.git.remote` and :mod:`environments.git.history` work on
the model of :mod:`environments.git.model`, and the model dispatches to them.
They name only this protocol, so they do not import the model back.
"""

from __future__ import annotations

from typing import Protocol

from environments.git.tree import Repo, Tree


class Workspace(Protocol):
    """A repository with a local tree that can merge and rebase its HEAD."""

    repo: Repo

    @property
    def tree(self) -> Tree: ...

    def new_commit(self, parents: list[str], commit_id: str | None = None) -> str: ...

    def move_head(self, commit: str) -> None: ...

    def where(self) -> str: ...

    def merge_into_head(self, ref: str, no_ff: bool = False) -> str: ...

    def rebase(self, upstream: str, branch: str | None) -> str: ...
