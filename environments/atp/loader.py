"""CapaBench's coq.json, lean.json and isabelle.json -> :class:`Problem` (prover by fields)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentbus import UserError, json_loads, read_text
from environments.atp.problem import COQ_MARKER, ISABELLE_MARKER, Problem


def _prover(item: dict[str, Any]) -> str:
    if "proposition" in item and "proof" in item:
        return "coq"
    if str(item.get("filename", "")).endswith(".lean"):
        return "lean"
    if "theory" in str(item.get("problem", "")) and "solution" in item:
        return "isabelle"
    raise UserError("atp: unknown problem format (expected CapaBench coq/lean/isabelle fields)")


def load_problems(path: Path) -> list[Problem]:
    try:
        raw = json_loads(read_text(path, "atp dataset"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"atp: cannot read {path}: {exc}") from None
    items = raw if isinstance(raw, list) else [raw]
    out: list[Problem] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "problem" not in item:
            raise UserError(f"atp: {path.name}[{i}] is not a problem object")
        try:
            out.append(_problem(item, i))
        except UserError as exc:
            raise UserError(f"atp: {path.name}[{i}]: {str(exc).removeprefix('atp: ')}") from None
        except KeyError as exc:
            raise UserError(f"atp: {path.name}[{i}] has no {exc.args[0]!r} field") from None
    return out


def _problem(item: dict[str, Any], i: int) -> Problem:
    """One problem object (KeyError for a missing field, UserError for a bad one)."""
    prover = _prover(item)
    source = str(item["problem"])
    if prover == "coq":
        if not COQ_MARKER.search(source):
            raise UserError("has no 'Fill in your proof here' marker")
        theorem, proof = str(item["proposition"]), str(item["proof"]).strip()
    elif prover == "isabelle":
        if not ISABELLE_MARKER.search(source):
            raise UserError("has no 'Fill Your Proof Here' marker")
        theorem, proof = str(item.get("theorem", f"p{i}")), str(item["solution"])
    else:
        theorem, proof = str(item.get("theorem", f"p{i}")), str(item["solution"])
    return Problem(f"{prover}-{i + 1:03d}", prover, source, theorem, proof)
