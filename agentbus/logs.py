"""Logging setup: structlog, pretty on a terminal, JSON lines otherwise.

Secrets never reach a log: any field whose name looks like a credential is
replaced, and so is any string value that looks like an API key.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

SECRET_KEYS = re.compile(r"(api[_-]?key|authorization|token|secret|password)", re.I)
SECRET_VALUES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,})")


def redact(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: hide credentials by key name and by shape."""
    for key, value in list(event.items()):
        if SECRET_KEYS.search(key) and value:
            event[key] = "***"
        elif isinstance(value, str) and SECRET_VALUES.search(value):
            event[key] = SECRET_VALUES.sub("***", value)
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
