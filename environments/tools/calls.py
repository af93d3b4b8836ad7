"""One tool call: parsed from the action text, validated, executed, reported.

The action syntax is one JSON object, ``{"name": FUNCTION, "arguments":
{...}}`` (the OpenAI function-call shape), optionally inside a
``<tool_call>`` block; ``finish`` with ``{"answer": TEXT}`` ends the task.
Every failure is an observation the agent can act on, never an exception:
``parse_error``, ``unknown_tool``, ``invalid_argument`` (pydantic's first
complaint), ``not_found``, and the transient ``rate_limit`` and ``timeout``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import ValidationError

from environments.tools.apis import CATALOGUE, ApiError

FINISH = "finish"
_WRAPPED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
#: what a transient failure says (the same call succeeds when retried)
TRANSIENT: dict[str, str] = {
    "rate_limit": "429 too many requests for this API key; retry the same call",
    "timeout": "the upstream API did not answer within 10s; retry the same call",
}


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        """The call in the action syntax (compact JSON, keys in order given)."""
        return orjson.dumps({"name": self.name, "arguments": self.arguments}).decode()


@dataclass(frozen=True)
class Result:
    """What one call produced: a response, or an error kind and message."""

    ok: bool
    text: str
    kind: str = "ok"
    response: dict[str, Any] | None = None


def parse_call(text: str) -> Call | str:
    """The call an action text holds, or a one-line reason it holds none."""
    body = text.strip()
    wrapped = _WRAPPED.search(body)
    if wrapped:
        body = wrapped.group(1)
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return 'not a JSON object; write {"name": FUNCTION, "arguments": {...}}'
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return 'the call needs a string "name" and an "arguments" object'
    args = data.get("arguments", {})
    if isinstance(args, str):
        try:
            args = orjson.loads(args or "{}")
        except orjson.JSONDecodeError:
            return "arguments are not valid JSON"
    if not isinstance(args, dict):
        return '"arguments" must be a JSON object'
    return Call(data["name"].strip(), args)


def validate(call: Call) -> dict[str, Any] | Result:
    """The validated arguments (defaults filled in), or the error observation."""
    api = CATALOGUE.get(call.name)
    if api is None:
        return Result(False, f"ERROR unknown_tool: no function named {call.name!r}", "unknown_tool")
    try:
        params = api.params.model_validate(call.arguments)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        return Result(
            False,
            f"ERROR invalid_argument: {call.name}: {where}: {first['msg']}",
            "invalid_argument",
        )
    return params.model_dump()


def key(call: Call) -> str | None:
    """A canonical form for comparing calls (None when the call is not valid)."""
    args = validate(call)
    if isinstance(args, Result):
        return None
    norm = {k: v.strip().lower() if isinstance(v, str) else v for k, v in args.items()}
    return orjson.dumps({"n": call.name, "a": norm}, option=orjson.OPT_SORT_KEYS).decode()


def execute(call: Call) -> Result:
    """Run a call against the seeded backend."""
    args = validate(call)
    if isinstance(args, Result):
        return args
    api = CATALOGUE[call.name]
    try:
        response = api.run(api.params.model_validate(args))
    except ApiError as exc:
        return Result(False, f"ERROR {exc.kind}: {call.name}: {exc}", exc.kind)
    return Result(True, f"OK {call.name}: {orjson.dumps(response).decode()}", "ok", response)


def transient(call: Call, kind: str) -> Result:
    return Result(False, f"ERROR {kind}: {call.name}: {TRANSIENT[kind]}", kind)
