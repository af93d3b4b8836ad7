"""Which kind of task comes at index i: seeded shuffles of the truth table's block.

A simulator truth table is the mean over reference runs of ``BLOCK`` (30)
generated tasks, and the generators used to give task ``i`` the kind
``kinds[i mod K]``. So the table's population is the mix of one such block
(for four kinds: 8, 8, 7 and 7 tasks), but a run shorter than a block got a
fixed, unrepresentative mix: a 3-task os run one task per category, a 1-task
run always the first kind, a 3-task git run difficulties 1-3 only.

:func:`kind_at` keeps the block's mix and orders it at random: the tasks come
in blocks of ``BLOCK``, each a seeded shuffle of the old block. A whole block
is exactly the table's mix (so the stored tables stay valid), and any first T
tasks are a random sample of it without replacement, whatever T. The order
depends on (salt, seed, block) alone, never on the run's size, so a longer
run keeps the tasks of a shorter one (prefix-stable), and task ``i`` can be
rebuilt alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

#: the reference runs' size (``tasks_per_seed`` of every generated table)
BLOCK = 30

K = TypeVar("K")


def block_kinds(kinds: Sequence[K], block: int = BLOCK) -> list[K]:
    """The kinds of one block in the old order (``kinds[j mod K]``): the table's mix."""
    return [kinds[j % len(kinds)] for j in range(block)]


def source_index(salt: str, seed: int, index: int, block: int = BLOCK) -> int:
    """Which task of the old order comes at ``index``: a seeded shuffle within its block.

    A generator whose tasks carry more than their kind by index (atp's and os's
    ids hold no seed, and the simulator draws a task's trap rate from its id)
    builds old task ``source_index(...)`` at ``index``: a block is then the
    old block's very tasks, reordered.
    """
    number, at = divmod(index, block)
    order = list(range(block))
    random.Random(f"{salt}-order:{seed}:{number}").shuffle(order)
    return number * block + order[at]


def kind_at(kinds: Sequence[K], salt: str, seed: int, index: int, block: int = BLOCK) -> K:
    """The kind of task ``index``: the old kind of its :func:`source_index`."""
    if not kinds:
        raise ValueError("kind_at needs at least one kind")
    return kinds[source_index(salt, seed, index, block) % len(kinds)]


__all__ = ["BLOCK", "block_kinds", "kind_at", "source_index"]
