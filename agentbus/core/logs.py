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
#: formats, bearer tokens, credential-named query parameters, URL user info.
#: Each pattern starts with a literal or a small character class and runs
#: only where its literal occurs (case-insensitive alternations over every
#: event line cost ~0.5 ms per 16 KB line; these a few microseconds)
QUERY_NAMES = frozenset(
    {
        "api_key", "api-key", "apikey", "key", "token", "access_token", "access-token",
        "auth", "secret", "password", "passwd", "sig", "signature", "x-api-key",
    }
)  # fmt: skip
_KEY = r"\bsk-(?:ant-)?[A-Za-z0-9_\-]{8,}"
_BEARER = r"(\b[Bb][Ee][Aa][Rr][Ee][Rr]\s+)[A-Za-z0-9._~+/=\-]{8,}"
_USERINFO = r"://[^/?#\s@\"'<>\\]*:[^/?#\s@\"'<>\\]*@"
_RX = {name: re.compile(rx) for name, rx in (("key", _KEY), ("bearer", _BEARER),
       ("userinfo", _USERINFO))}  # fmt: skip
_RXB = {name: re.compile(rx.pattern.encode()) for name, rx in _RX.items()}


_NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-")
_VALUE_ENDS = frozenset(b"&# \t\r\n\"'<>\\")
_QUERY_NAMES_B = frozenset(n.encode() for n in QUERY_NAMES)


def _query_bytes(data: bytes) -> bytes:
    """``?api_key=X`` -> ``?api_key=***`` for each credential-named parameter.

    A scan from each ``=`` (a regular expression tried at every ``?``, ``&``
    and ``;`` of a long line cost ~0.3 ms a line).
    """
    out: list[bytes] = []
    start = 0
    eq = data.find(b"=")
    while eq != -1:
        name = eq
        while name > 0 and eq - name < 20 and data[name - 1] in _NAME_CHARS:
            name -= 1
        if name > 0 and data[name - 1] in b"?&;" and data[name:eq].lower() in _QUERY_NAMES_B:
            end = eq + 1
            while end < len(data) and data[end] not in _VALUE_ENDS:
                end += 1
            if end > eq + 1:
                out.append(data[start : eq + 1])
                out.append(b"***")
                start = end
        eq = data.find(b"=", eq + 1)
    if not out:
        return data
    out.append(data[start:])
    return b"".join(out)


def _query_text(text: str) -> str:
    clean = _query_bytes(text.encode("utf-8", "surrogatepass"))
    return clean.decode("utf-8", "surrogatepass")


def _shapes_text(text: str) -> str:
    if "sk-" in text:
        text = _RX["key"].sub("***", text)
    if "earer" in text or "EARER" in text:
        text = _RX["bearer"].sub("\\1***", text)
    if "=" in text:
        text = _query_text(text)
    if "://" in text:
        text = _RX["userinfo"].sub("://***@", text)
    return text


def _shapes_bytes(data: bytes) -> bytes:
    if b"sk-" in data:
        data = _RXB["key"].sub(b"***", data)
    if b"earer" in data or b"EARER" in data:
        data = _RXB["bearer"].sub(b"\\1***", data)
    if b"=" in data:
        data = _query_bytes(data)
    if b"://" in data:
        data = _RXB["userinfo"].sub(b"://***@", data)
    return data


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
    are caught by shape (:func:`_shapes_text`). Compiled once per set of secrets;
    a regular expression runs only on text that holds its literal part.
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
        self._forms = tuple({orjson.dumps(v).decode()[1:-1] for v in values} | set(values))
        self._forms_bytes = tuple(f.encode() for f in self._forms)

    def text(self, text: str) -> str:
        if self._text is not None and any(f in text for f in self._forms):
            text = self._text.sub("***", text)
        return _shapes_text(text)

    def raw(self, data: bytes) -> bytes:
        if self._bytes is not None and any(f in data for f in self._forms_bytes):
            data = self._bytes.sub(b"***", data)
        return _shapes_bytes(data)

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


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time of the write.

    A logger bound to the stream that was ``sys.stderr`` when logging was set
    up keeps writing there after a program swaps it (pytest's capture, a
    notebook, a daemon that redirects): into a closed file, a ValueError in
    the middle of the caller's work (a resume repairing its log tail raised
    it). Looking the stream up per write follows the swap.
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


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
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
