"""What the remote commands need of a repository model (a structural type).

:mod:`environments.git.remote` works on the model of
:mod:`environments.git.model`, and the model dispatches to the remote
commands. The remote side names only this protocol, so the two modules do not
import each other.
"""

from __future__ import annotations

from typing import Protocol

from environments.git.tree import Repo, Tree


class Workspace(Protocol):
    """A repository with a local tree that can merge and rebase its HEAD."""

    repo: Repo

    @property
    def tree(self) -> Tree: ...

    def merge_into_head(self, ref: str, no_ff: bool = False) -> str: ...

    def rebase(self, upstream: str, branch: str | None) -> str: ...
