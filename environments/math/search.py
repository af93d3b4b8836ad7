"""The knowledge-search tool: the top-3 knowledge points for a query, by BM25."""

from __future__ import annotations

import re
from collections.abc import Sequence

import anyio.to_thread
from rank_bm25 import BM25Okapi

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by for from how i in is it of on or that the this to use what "
    "when which with find value".split()
)


def _stem(word: str) -> str:
    """A light plural stemmer, so that 'equations' matches 'equation'."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


class KnowledgeBase:
    """An immutable BM25 index over knowledge texts, shared by every episode of a run."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = [t.strip() for t in texts if t and t.strip()]
        if not self.texts:
            raise ValueError("a knowledge base needs at least one non-empty text")
        self._index = BM25Okapi([tokenize(t) or ["_"] for t in self.texts])

    def search(self, query: str, k: int = 3) -> list[str]:
        """The ``k`` best-matching texts, best first (fewer when the query matches less)."""
        words = tokenize(query)
        if not words:
            return []
        scores = self._index.get_scores(words)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [self.texts[i] for i in order[:k] if scores[i] > 0]

    async def asearch(self, query: str, k: int = 3) -> list[str]:
        """:meth:`search` in a worker thread (a large index takes milliseconds)."""
        return await anyio.to_thread.run_sync(self.search, query, k)


__all__ = ["KnowledgeBase", "tokenize"]
