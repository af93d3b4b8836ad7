"""Logging setup: structlog, pretty on a terminal, JSON lines otherwise.

Secrets never reach a log: any field whose name looks like a credential is
replaced, and so is any string value that looks like an API key.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

SECRET_KEYS = re.compile(r"(api[_-]?key|authorization|token|secret|password)", re.I)
SECRET_VALUES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,})")


#: an environment value shorter than this is not treated as a secret to scrub
#: (a short value would blank out ordinary words)
MIN_SECRET_LEN = 8


def secret_values() -> list[str]:
    """Values of environment variables whose names say they hold a credential.

    ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``VLLM_API_KEY``, a plugin's
    ``FOO_TOKEN``: whatever the key looks like, its exact value is known here,
    so it can be removed from any text, even from a server's error message
    that quotes it back.
    """
    return sorted(
        (
            v
            for k, v in os.environ.items()
            if SECRET_KEYS.search(k) and len(v.strip()) >= MIN_SECRET_LEN
        ),
        key=len,
        reverse=True,
    )


def scrub(text: str) -> str:
    """``text`` with every known secret value and every key-shaped string replaced."""
    for value in secret_values():
        if value in text:
            text = text.replace(value, "***")
    return SECRET_VALUES.sub("***", text)


def redact(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: hide credentials by key name, by value and by shape."""
    for key, value in list(event.items()):
        if SECRET_KEYS.search(key) and value:
            event[key] = "***"
        elif isinstance(value, str):
            clean = scrub(value)
            if clean != value:
                event[key] = clean
    return event


def configure(level: str = "warning", *, json: bool | None = None) -> None:
    """Route structlog to stderr at ``level``; JSON when stderr is not a terminal."""
    as_json = (not sys.stderr.isatty()) if json is None else json
    renderer: Any = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
