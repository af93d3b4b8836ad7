"""Reading the files a user names (datasets, config files), with a bound.

A path on the command line can be anything: ``/dev/zero`` never ends, a FIFO
blocks until someone writes to it, a 40 GB file fills memory before a parser
sees a byte. Every loader reads through :func:`read_bounded`, which opens the
file without blocking, refuses anything but a regular file, checks its size
against a cap before reading and never reads more than the cap, so bad input
costs one clear line (a :class:`UserError`), not the machine.

Parsers recurse on nesting: ``json`` and ``tomllib`` raise ``RecursionError``
on a document nested a few thousand levels deep. :func:`json_loads` turns that
into the ``json.JSONDecodeError`` every loader already handles.

Lines of JSON that others wrote (an event log, an agent's stdout, a blame
log) are read one at a time and may be torn, another JSON value or no JSON at
all: :func:`json_object` gives the object a line holds, or None, so each
reader says only what it skips, not again how.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from agentbus.core.errors import UserError

MIB = 1 << 20

#: largest dataset (task or knowledge) file read, unless AGENTBUS_MAX_DATASET_MB says otherwise
DATASET_LIMIT_MB = 512
#: largest config file (TOML) read
CONFIG_LIMIT_MB = 4


def dataset_limit() -> int:
    """The dataset cap in bytes (``AGENTBUS_MAX_DATASET_MB`` raises or lowers it)."""
    raw = os.environ.get("AGENTBUS_MAX_DATASET_MB", "").strip()
    try:
        mb = float(raw) if raw else DATASET_LIMIT_MB
    except ValueError:
        raise UserError(f"AGENTBUS_MAX_DATASET_MB must be a number of MiB, got {raw!r}") from None
    if not 0 < mb < 1 << 40:
        raise UserError(f"AGENTBUS_MAX_DATASET_MB must be positive, got {raw!r}")
    return int(mb * MIB)


def _size(n: int) -> str:
    return f"{n / MIB:,.1f} MiB" if n >= MIB else f"{n:,} bytes"


def check_file(path: Path, what: str, limit: int | None = None) -> os.stat_result:
    """``stat`` of ``path`` if it is a regular file within ``limit``; a UserError otherwise."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    _check_stat(st, path, what, dataset_limit() if limit is None else limit)
    return st


def _check_stat(st: os.stat_result, path: Path, what: str, limit: int) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise UserError(f"{what} {path} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise UserError(
            f"{what} {path} is not a regular file (a device, FIFO or socket); give a file"
        )
    if st.st_size > limit:
        raise UserError(
            f"{what} {path} is {_size(st.st_size)}, over the {_size(limit)} limit"
            + (" (AGENTBUS_MAX_DATASET_MB raises it)" if "config" not in what else "")
        )


def read_bounded(path: Path, what: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (UserError otherwise).

    The file is opened with ``O_NONBLOCK`` so that a FIFO is refused, not
    waited on; its size is checked on the open descriptor (no swap between
    the check and the read), and the read stops one byte past the cap in case
    the file grows meanwhile. A missing file raises ``FileNotFoundError``,
    which loaders already turn into their own message.
    """
    cap = dataset_limit() if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise  # the caller's own message (most name the format they expected)
    except IsADirectoryError:
        raise UserError(f"{what} {path} is a directory, not a file") from None
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        _check_stat(os.fstat(fd), path, what, cap)
        chunks: list[bytes] = []
        got = 0
        while got <= cap:
            chunk = os.read(fd, min(MIB, cap + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if got > cap:
        raise UserError(f"{what} {path} grew past the {_size(cap)} limit while being read")
    return b"".join(chunks)


def read_text(path: Path, what: str, limit: int | None = None) -> str:
    """:func:`read_bounded` decoded as UTF-8 (a UserError naming the bad byte otherwise)."""
    data = read_bounded(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None


def json_loads(text: str | bytes) -> Any:
    """``json.loads``, with nesting too deep to parse reported as a ``JSONDecodeError``."""
    try:
        return json.loads(text)
    except RecursionError:
        doc = text if isinstance(text, str) else ""
        raise json.JSONDecodeError("nested too deeply to parse", doc, 0) from None


def json_object(line: str | bytes) -> dict[str, Any] | None:
    """The JSON object ``line`` holds; None for a line that is not JSON or not an object."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


__all__ = [
    "CONFIG_LIMIT_MB",
    "DATASET_LIMIT_MB",
    "check_file",
    "dataset_limit",
    "json_loads",
    "json_object",
    "read_bounded",
    "read_text",
]


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``base`` with ``over`` merged in: tables merge key by key, anything else replaces.

    The one rule for layered settings (a config file over the defaults, the
    command line over the file, a profile override over its parent).
    """
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        out[key] = (
            deep_merge(old, value)
            if isinstance(value, Mapping) and isinstance(old, Mapping)
            else value
        )
    return out
