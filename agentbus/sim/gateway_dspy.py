"""DSPy's output fields and their types, read from its adapters' system prompt.

DSPy's ChatAdapter and JSONAdapter state the signature's output fields in
the system prompt (``Your output fields are: 1. `answer` (float): ...``),
with a JSON schema in a field's note for lists, dicts and models. The
simulator's gateway model reads them here so that it writes every field in
its own type (:func:`agentbus.sim.gateway_formats.render`), as a model that
follows the prompt does. Kept apart from the other conventions because it
is one framework's prompt grammar.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import orjson

from agentbus.llm.types import ChatMessage

_OUTPUT_FIELDS = re.compile(
    r"Your output fields are:\s*\n(.*?)(?:All interactions will be|\[\[ ## |\Z)", re.S
)
_FIELD_LINE = re.compile(r"^\s*\d+\.\s*`([^`]+)`(?:\s*\((.*?)\)(?=:|\s*$))?", re.M)
_NOTE = re.compile(r"\[\[ ## (\w+) ## \]\]\n\{\w+\}\s*# note: the value you produce (.+?)$", re.M)
#: the same note inside the JSON adapter's template (a JSON string, quotes escaped)
_JSON_NOTE = re.compile(
    r'^\s*"(\w+)":\s*"\{\w+\}\s*# note: the value you produce ((?:[^"\\]|\\.)*)"', re.M
)
_LITERAL = re.compile(r"""['"]([^'"]*)['"]""")

#: DSPy's type names -> the JSON schema a value of that type has
DSPY_TYPES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
}


def output_fields(messages: Sequence[ChatMessage]) -> list[str]:
    """DSPy's output field names (from its adapters' system prompt), or none."""
    return list(output_schema(messages))


def output_schema(messages: Sequence[ChatMessage]) -> dict[str, Any]:
    """DSPy's output fields with the JSON schema of each (``{}``: no DSPy prompt).

    The type comes from the field list (``2. `confidence` (float): ...``):
    ``str``/``int``/``float``/``bool``, ``Literal['a', 'b']`` as an enum, and
    for lists, dicts and models the JSON schema DSPy states in the field's
    note (``the value you produce must adhere to the JSON schema: {...}``).
    """
    for m in messages:
        if m["role"] != "system" or "Your output fields are" not in m["content"]:
            continue
        section = _OUTPUT_FIELDS.search(m["content"])
        if not section:
            continue
        notes = dict(_NOTE.findall(m["content"]))
        for name, escaped in _JSON_NOTE.findall(m["content"]):
            try:
                notes.setdefault(name, str(orjson.loads(f'"{escaped}"')))
            except orjson.JSONDecodeError:
                continue
        out: dict[str, Any] = {}
        for name, kind in _FIELD_LINE.findall(section.group(1)):
            out[name] = _dspy_schema(kind.strip(), notes.get(name, ""))
        return out
    return {}


def _dspy_schema(kind: str, note: str) -> dict[str, Any]:
    if kind in DSPY_TYPES:
        return DSPY_TYPES[kind]
    if kind.startswith("Literal["):
        return {"enum": _LITERAL.findall(kind)}
    _, sep, tail = note.partition("JSON schema:")
    if sep:
        try:
            schema = orjson.loads(tail.strip())
        except orjson.JSONDecodeError:
            schema = None
        if isinstance(schema, dict):
            return schema
    if kind.startswith(("list[", "List[")):
        return {"type": "array"}
    if kind.startswith(("dict[", "Dict[")):
        return {"type": "object"}
    return {"type": "string"}


__all__ = ["DSPY_TYPES", "output_fields", "output_schema"]
