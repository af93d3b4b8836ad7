"""The generator's word lists: departments, product types, attributes, options.

Each product type has a pool of attributes (a product carries three or four
of them, so products of one type overlap and make realistic distractors), the
option groups a buyer chooses from and a price range. Brand names and
shopper contexts are invented.

The words themselves are data, kept in ``vocabulary.toml`` next to this file
so that adding a product type is an edit to a word list, not to code; this
module reads it once at import and offers the same tuples as before.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class Kind:
    """One product type of a department."""

    department: str
    noun: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    price: tuple[float, float]


def _load() -> dict[str, Any]:
    text = resources.files(__package__ or "environments.shopping")
    return tomllib.loads(text.joinpath("vocabulary.toml").read_text("utf-8"))


_DATA = _load()

COLOURS: tuple[str, ...] = tuple(_DATA["colours"])
SIZES: tuple[str, ...] = tuple(_DATA["sizes"])
SHOE_SIZES: tuple[str, ...] = tuple(_DATA["shoe_sizes"])
#: the option lists a kind may name instead of spelling its values out
_SHARED = {"colours": COLOURS, "sizes": SIZES, "shoe_sizes": SHOE_SIZES}


def _kind(entry: dict[str, Any]) -> Kind:
    options = tuple(
        (name, _SHARED[values] if isinstance(values, str) else tuple(values))
        for name, values in entry["options"].items()
    )
    low, high = entry["price"]
    attributes = tuple(entry["attributes"])
    return Kind(entry["department"], entry["noun"], attributes, options, (low, high))


KINDS: tuple[Kind, ...] = tuple(_kind(entry) for entry in _DATA["kinds"])

BRANDS: tuple[str, ...] = tuple(_DATA["brands"])

#: the context a rich instruction opens with, per department
CONTEXTS: dict[str, tuple[str, ...]] = {
    department: tuple(lines) for department, lines in _DATA["contexts"].items()
}

__all__ = ["BRANDS", "COLOURS", "CONTEXTS", "KINDS", "SHOE_SIZES", "SIZES", "Kind"]
