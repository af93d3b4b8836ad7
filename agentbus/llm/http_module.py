"""The HTTP library an LLM SDK is built on, so agentbus works with each SDK generation.

The ``openai`` and ``anthropic`` SDKs moved from ``httpx`` to ``httpx2``
(openai 3, anthropic 2); frameworks that users install beside agentbus still
pin the older generation (CrewAI resolves with openai 2). Pool limits and
timeouts handed to an SDK must be objects of the library its own client
classes derive from, so they are built from that library, found through the
SDK's ``DefaultAsyncHttpxClient``, never from a fixed import.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


def http_module(sdk: Any) -> ModuleType:
    """``httpx2`` or ``httpx``: the module ``sdk``'s async HTTP client class comes from."""
    for base in sdk.DefaultAsyncHttpxClient.__mro__[1:]:
        root = base.__module__.split(".")[0]
        if root in ("httpx", "httpx2"):
            return sys.modules[root]
    raise RuntimeError(f"{sdk.__name__}: cannot tell which HTTP library it is built on")


__all__ = ["http_module"]
