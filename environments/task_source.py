"""Where the tasks of a file-or-generator environment come from.

The git, os and atp environments read a task file when ``--dataset`` names
one and otherwise make ``count`` tasks with their seeded generator; either
list is then cut to ``--limit``. This is that choice, once. (The kit's
:func:`agentbus.generated_count` serves generator-only environments: it
refuses a dataset and asks the generator for the first ``limit`` tasks only.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from agentbus import TaskSource, UserError

T = TypeVar("T")


def loaded_or_generated(
    source: TaskSource,
    env: str,
    load: Callable[[Path], list[T]],
    generate: Callable[[int, int], list[T]],
) -> list[T]:
    """``load(dataset)`` or ``generate(count, seed)``, then the first ``limit`` of them."""
    if source.dataset is not None:
        items = load(source.dataset)
    else:
        if source.count < 1:
            raise UserError(f"{env}: the generator needs count >= 1")
        items = generate(source.count, source.seed)
    return items if source.limit is None else items[: source.limit]
