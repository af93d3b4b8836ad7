"""A run directory's manifest: what a run was made with, secrets left out.

The manifest records the run's configuration, the command line and the package
versions, with anything that looks like a credential redacted. Reopening a
directory to resume compares the keys that decide the results
(:func:`manifest_differences`) and refuses a directory written by a newer
agentbus (:func:`check_version`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import platform
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from agentbus.core.errors import UserError
from agentbus.core.events import (
    SCHEMA_VERSION,
)
from agentbus.runs.run_files import _OPTS, LOCK, _jsonable

MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1


#: distributions whose versions go into the manifest (missing ones are skipped)
VERSIONED = (
    "agentbus",
    "anyio",
    "aiohttp",
    "openai",
    "anthropic",
    "pydantic",
    "numpy",
    "scipy",
    "sympy",
    "orjson",
    "vllm",
    "ray",
)

_MISSING = object()


def lookup(data: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted path (``"models.test"``), or a sentinel when absent."""
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _show(value: Any) -> str:
    if value is _MISSING:
        return "<unset>"
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def manifest_differences(
    old: Mapping[str, Any], new: Mapping[str, Any], keys: Sequence[str]
) -> list[str]:
    """``"key: old -> new"`` for each dotted key whose value differs."""
    diffs = []
    for key in keys:
        a, b = lookup(old, key), lookup(new, key)
        if a is _MISSING and b is _MISSING:
            continue
        if a is _MISSING or b is _MISSING or a != b:
            diffs.append(f"{key}={_show(a)} (this run asks {key}={_show(b)})")
    return diffs


#: config keys whose values are credentials: exact names, or names ending so
#: (``max_tokens`` and ``decode_s_per_token`` are settings, not secrets)
SECRET_KEYS = frozenset({"token", "api_key", "apikey", "secret", "password"})
SECRET_SUFFIXES = ("_api_key", "_secret", "_password", "auth_token", "access_token")


def is_secret_key(key: object) -> bool:
    name = str(key).lower()
    return name in SECRET_KEYS or name.endswith(SECRET_SUFFIXES)


def redact(data: Any) -> Any:
    """A copy with credential values (tokens, API keys) set to None.

    The manifest is a file anyone with the run directory can read, and the
    live server shows it: credentials have no place in it. Only keys that name
    a credential are cleared, so every other setting round-trips on resume.
    """
    if isinstance(data, Mapping):
        return {
            k: None if is_secret_key(k) and data[k] is not None else redact(data[k]) for k in data
        }
    if isinstance(data, list):
        return [redact(x) for x in data]
    return data


def redact_argv(argv: Sequence[str]) -> list[str]:
    """The command line with the values of credential flags (``--token X``) hidden.

    The manifest keeps the command line for the record; a secret given as a
    flag must not travel with it.
    """
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append("***")
            hide_next = False
            continue
        flag, eq, _ = arg.partition("=")
        secret = flag.startswith("--") and is_secret_key(flag[2:].replace("-", "_"))
        if secret and eq:
            out.append(f"{flag}=***")
        else:
            out.append(arg)
            hide_next = secret
    return out


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in VERSIONED:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _dumps_pretty(data: Any) -> bytes:
    return orjson.dumps(data, default=_jsonable, option=_OPTS | orjson.OPT_INDENT_2) + b"\n"


def _load_manifest(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / MANIFEST
    if not path.exists():
        others = [p.name for p in run_dir.iterdir() if p.name != LOCK]
        if others:
            raise UserError(
                f"run dir {run_dir} is not empty and holds no {MANIFEST}; "
                "use a new or empty --run-dir"
            )
        return None
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON ({exc}); use another --run-dir") from None
    if not isinstance(data, dict) or "config" not in data:
        raise UserError(f"{path} is not an agentbus run manifest; use another --run-dir")
    return data


def _check_version(run_dir: Path, stored: Mapping[str, Any]) -> None:
    """Refuse a run directory written by a newer agentbus (its files may mean other things)."""
    for key, ours in (("format", MANIFEST_FORMAT), ("schema", SCHEMA_VERSION)):
        theirs = stored.get(key, ours)
        if not isinstance(theirs, int) or theirs > ours:
            version = stored.get("versions", {}).get("agentbus", "unknown")
            raise UserError(
                f"run dir {run_dir} was written by a newer agentbus ({version}; manifest "
                f"{key} {theirs}, this one reads up to {ours}); upgrade or use another --run-dir"
            )


def open_manifest(
    run_dir: Path, manifest: dict[str, Any], result_keys: Sequence[str]
) -> tuple[dict[str, Any], bool]:
    """The manifest to store for this run and whether it resumes an earlier one.

    A new directory gets a fresh manifest; one that holds a run must have been
    made with the same value at every dotted key in ``result_keys``, else a
    :class:`UserError` names each difference. A resume is added to the list.
    """
    stored = _load_manifest(run_dir)
    if stored is None:
        stored = {
            "format": MANIFEST_FORMAT,
            "schema": SCHEMA_VERSION,
            "started_at": _now(),
            "argv": redact_argv(sys.argv),
            # relative paths of the command line (an agent command, a dataset) resolve here
            "cwd": str(Path.cwd()),
            "versions": package_versions(),
            "result_keys": list(result_keys),
            "resumes": [],
            "config": redact(manifest),
        }
        resumed = False
    else:
        _check_version(run_dir, stored)
        diffs = manifest_differences(stored.get("config", {}), redact(manifest), result_keys)
        if diffs:
            raise UserError(
                f"run dir {run_dir} was made with " + "; ".join(diffs) + "; use another --run-dir"
            )
        stored.setdefault("resumes", []).append(
            {"at": _now(), "versions": package_versions(), "argv": redact_argv(sys.argv)}
        )
        resumed = True
    return stored, resumed
