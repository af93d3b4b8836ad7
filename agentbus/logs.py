"""Logging setup, and the scrubbing of secrets from everything agentbus writes.

Secrets never reach a log: any field whose name looks like a credential is
replaced, and so is any string value that is a known secret or looks like
one. The same :class:`Scrubber` cleans every line of the event log, the LLM
cache, the manifest and the files the dashboard serves (docs/security.md).
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import MutableMapping
from typing import Any

import orjson
import structlog

SECRET_KEYS = re.compile(r"(api[_-]?key|authorization|token|secret|password)", re.I)
SECRET_VALUES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,})")

#: environment variables whose values are credentials: ``OPENAI_API_KEY``,
#: ``HF_TOKEN``, ``DB_PASSWORD``; not ``MAX_TOKENS`` (token only at the end)
SECRET_ENV = re.compile(
    r"(api[_-]?key|(^|_)token$|(^|_)key$|secret|passw(or)?d|credential|authorization)", re.I
)

#: a known secret shorter than this is not scrubbed: two or three characters
#: occur everywhere in text, so removing them would corrupt it and hide nothing
MIN_SECRET_LEN = 4
#: a known secret shorter than this is scrubbed only as a whole word (not
#: inside a longer run of letters and digits), so a 5-character key does not
#: cut pieces out of ordinary words; from this length on, wherever it occurs
WHOLE_WORD_BELOW = 8

#: credentials by shape, for secrets nobody told us about: provider key
#: formats, bearer tokens, credential-named query parameters, URL user info
_SHAPES = (
    r"(?P<key>\bsk-(?:ant-)?[A-Za-z0-9_\-]{8,})"
    r"|(?P<bearer>\bBearer\s+)[A-Za-z0-9._~+/=\-]{8,}"
    r"|(?P<query>[?&;](?:api[_-]?key|apikey|key|token|access[_-]?token|auth|secret|password"
    r"|passwd|sig|signature|x-api-key)=)[^&#\s\"'<>\\]+"
    r"|(?P<userinfo>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s@\"'<>\\]*:[^/?#\s@\"'<>\\]*@"
)
_SHAPES_TEXT = re.compile(_SHAPES, re.I)
_SHAPES_BYTES = re.compile(_SHAPES.encode(), re.I)


def _shape_text(m: re.Match[str]) -> str:
    if m.group("key"):
        return "***"
    if m.group("userinfo"):
        return f"{m.group('userinfo')}***@"
    return f"{m.group('bearer') or m.group('query')}***"


def _shape_bytes(m: re.Match[bytes]) -> bytes:
    if m.group("key"):
        return b"***"
    if m.group("userinfo"):
        return m.group("userinfo") + b"***@"
    return (m.group("bearer") or m.group("query")) + b"***"


_EXTRA: set[str] = set()

#: values that are never secrets, whatever the variable is called
#: (``USE_AUTH_TOKEN=true`` would otherwise blank every ``true`` in the log)
NOT_SECRETS = frozenset({"true", "false", "null", "none", "yes", "no", "on", "off", "empty"})


def add_secret(value: str | None) -> None:
    """Treat ``value`` (a ``--token``, a key from a config) as a secret to scrub."""
    if value and len(value.strip()) >= MIN_SECRET_LEN:
        _EXTRA.add(value.strip())


def secret_values() -> list[str]:
    """Every known secret: credential-named environment variables and :func:`add_secret`'s.

    ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``VLLM_API_KEY``, a plugin's
    ``FOO_TOKEN``: whatever the key looks like, its exact value is known here,
    so it can be removed from any text, even from a model's answer or a
    server's error message that quotes it back. Longest first, so a key that
    contains another is removed whole.
    """
    found = {v.strip() for k, v in os.environ.items() if SECRET_ENV.search(k)} | _EXTRA
    return sorted(
        (v for v in found if len(v) >= MIN_SECRET_LEN and v.lower() not in NOT_SECRETS),
        key=len,
        reverse=True,
    )


class Scrubber:
    """Removes secrets from text and from bytes about to be written or served.

    The rule: the exact value of every known secret of 8 characters or more
    is replaced wherever it occurs, in its plain and its JSON-escaped form;
    one of 4 to 7 characters only where it stands as a word of its own;
    shorter ones are not secrets worth the damage. Secrets nobody declared
    are caught by shape (:data:`_SHAPES`). Compiled once per set of secrets.
    """

    def __init__(self, values: list[str]) -> None:
        self.values = tuple(values)
        alternatives: list[str] = []
        for value in values:
            forms = {value, orjson.dumps(value).decode()[1:-1]}
            for form in sorted(forms, key=len, reverse=True):
                escaped = re.escape(form)
                if len(value) < WHOLE_WORD_BELOW:
                    escaped = f"(?<![A-Za-z0-9]){escaped}(?![A-Za-z0-9])"
                alternatives.append(escaped)
        known = "|".join(alternatives)
        self._text = re.compile(known) if known else None
        self._bytes = re.compile(known.encode()) if known else None

    def text(self, text: str) -> str:
        if self._text is not None:
            text = self._text.sub("***", text)
        return _SHAPES_TEXT.sub(_shape_text, text)

    def raw(self, data: bytes) -> bytes:
        if self._bytes is not None:
            data = self._bytes.sub(b"***", data)
        return _SHAPES_BYTES.sub(_shape_bytes, data)

    def json(self, data: bytes, option: int = 0) -> bytes:
        """:meth:`raw` for a JSON document, which must stay valid JSON.

        The fast path replaces bytes; where that broke the document (a secret
        made of digits that also occurs as a number), the strings of the
        parsed document are scrubbed one by one instead.
        """
        clean = self.raw(data)
        if clean == data:
            return data
        try:
            orjson.loads(clean)
        except orjson.JSONDecodeError:
            newline = b"\n" if data.endswith(b"\n") else b""
            return orjson.dumps(self._walk(orjson.loads(data)), option=option) + newline
        return clean

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self._walk(v) for k, v in value.items()}
        return value


_SCRUBBER: Scrubber | None = None


def scrubber() -> Scrubber:
    """The scrubber for the secrets known now (rebuilt when they change)."""
    global _SCRUBBER
    values = secret_values()
    if _SCRUBBER is None or _SCRUBBER.values != tuple(values):
        _SCRUBBER = Scrubber(values)
    return _SCRUBBER


def scrub(text: str) -> str:
    """``text`` with every known secret value and every key-shaped string replaced."""
    return scrubber().text(text)


def scrub_bytes(data: bytes) -> bytes:
    """:func:`scrub` for bytes (a log line, a file served or written)."""
    return scrubber().raw(data)


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
