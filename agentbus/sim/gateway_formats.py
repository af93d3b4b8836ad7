"""How the simulator's gateway model fits the frameworks' own conventions.

The generic gateway model (:mod:`agentbus.sim.gateway_model`) decides *what*
a module answers (right or wrong, with its skill); this module decides how
the answer is written so that the framework that asked can read it, the way a
capable model follows the instructions in its prompt:

* **Output format.** DSPy's ChatAdapter asks for ``[[ ## field ## ]]``
  sections and parses nothing else; its JSONAdapter, structured outputs
  (``response_format``) and JSON-mode prompts ask for a JSON object; a ReAct
  prompt (LangChain, CrewAI) asks for ``Final Answer: ...``. Anything else gets
  the plain ``ANSWER: <value>`` line.
* **Tools.** A final-answer tool (smolagents' ``final_answer``, pydantic-ai's
  ``final_result``, a ``submit``/``finish`` function) ends the module's turn,
  so it is called last and carries the answer in its arguments, every other
  field in its own type (the framework validates them against its output
  model); delegation tools (handoffs, smolagents' managed agents, CrewAI's
  coworker tools, pydantic-ai's agent delegation) carry the task text, and
  a worker's report is read as text or, when it is a JSON object (a typed
  output), by its answer field.
  Earlier calls are recognised in every form frameworks write them back:
  the gateway's ``<tool_call>`` blocks, and tool calls written into assistant
  text (smolagents' ``Calling tools: [{... 'name': 'calculator' ...}]``,
  JSON ``"name": "..."``, ReAct's ``Action: ...``), and a failed call the
  framework reports back without the call itself (smolagents' ``Error
  executing tool 'lookup' with arguments ...``), so a tool that raises is
  not called again and again until the step limit.

None of this touches the verdict: formats and routing never depend on whether
the answer is right, so an agent's truth still follows from its own logic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agentbus.llm.tools import split_tool_calls
from agentbus.llm.types import ChatMessage
from agentbus.sim.gateway_dspy import output_schema

#: function names that end a module's turn with its answer
FINAL_TOOLS = frozenset(
    {
        "final_answer",
        "final",
        "answer",
        "submit",
        "submit_answer",
        "finish",
        "final_result",
        "respond",
        "return_answer",
    }
)

#: argument names that take the answer, in order of preference
ANSWER_KEYS = ("answer", "final_answer", "result", "output", "response", "value", "text", "content")

#: argument names of a delegation tool that take the task given to the worker
TASK_KEYS = ("task", "query", "question", "request", "input", "instructions", "message")

#: a placeholder argument per JSON-schema type (for a required property)
PLACEHOLDERS: dict[str, Any] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "object": {},
    "null": None,
}

#: a tool result or error that names its call ("Error executing tool 'lookup' with ...")
_REPORTED_CALL = re.compile(r"\b(?:executing|calling|running) tool ['\"`]?([\w.\-]+)", re.I)
_NAME_FIELD = re.compile(r"""['"]name['"]\s*:\s*['"]([^'"]+)['"]""")
_ACTION = re.compile(r"^\s*Action\s*:\s*`?([\w.\- ]+?)`?\s*$", re.M)


def is_final_tool(name: str) -> bool:
    """A function that hands the module's answer back (called last, with the answer)."""
    low = name.strip().lower()
    return low in FINAL_TOOLS or low.startswith("final_")


def is_delegation_tool(name: str, parameters: Any) -> bool:
    """A function that hands work to another agent (a handoff, a managed agent, a coworker)."""
    low = name.strip().lower()
    if low.startswith(("transfer_to_", "handoff", "delegate")) or "coworker" in low:
        return True
    required = parameters.get("required") if isinstance(parameters, Mapping) else None
    return isinstance(required, list) and "task" in required


def _schema_type(schema: Any) -> str:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, list):  # ["string", "null"]
        kind = next((k for k in kind if k != "null"), "null")
    return str(kind) if kind else "string"


def _properties(parameters: Any) -> Mapping[str, Any]:
    if not isinstance(parameters, Mapping):
        return {}
    props = parameters.get("properties")
    return props if isinstance(props, Mapping) else {}


def placeholder_arguments(parameters: Any) -> dict[str, Any]:
    """An arguments object with each required property of ``parameters`` filled in."""
    props = _properties(parameters)
    required = parameters.get("required") if isinstance(parameters, Mapping) else None
    return {str(n): PLACEHOLDERS.get(_schema_type(props.get(n)), "") for n in required or ()}


def filler(schema: Any, text: str, depth: int = 0, defs: Mapping[str, Any] | None = None) -> Any:
    """A value of the type ``schema`` asks for, for a field that is not the answer.

    A string field gets ``text`` (the module's prose); a number, a flag, an
    enum, a list or a nested object (``$ref`` into ``$defs`` followed) gets a
    well-formed value of its type (the first enum member, 0.5, 1, true, a
    one-item list, an object with every property filled), so a typed parser
    (DSPy's, a JSON-schema validator) reads it.
    """
    if not isinstance(schema, Mapping) or depth > 6:
        return text
    if defs is None:
        found = schema.get("$defs") or schema.get("definitions")
        defs = found if isinstance(found, Mapping) else {}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return filler(defs.get(ref.rsplit("/", 1)[-1]), text, depth + 1, defs)
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            usable = [o for o in options if _schema_type(o) != "null"] or options
            return filler(usable[0], text, depth + 1, defs)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = _schema_type(schema)
    if kind == "array":
        return [filler(schema.get("items"), text, depth + 1, defs)]
    if kind == "object":
        props = _properties(schema)
        return {str(n): filler(sub, text, depth + 1, defs) for n, sub in props.items()}
    return {"number": 0.5, "integer": 1, "boolean": True, "null": None}.get(kind, text)


def answer_value(value: str, schema: Any, text: str) -> Any:
    """The module's answer in the field's type: an object carries it in its answer-like part.

    A nested answer (DSPy's pydantic output field, a JSON-schema object) is
    filled like any other field, with the value in its answer-like property
    (:data:`ANSWER_KEYS`, else its first number or string property).
    """
    defs = schema.get("$defs", {}) if isinstance(schema, Mapping) else {}
    ref = schema.get("$ref") if isinstance(schema, Mapping) else None
    target = defs.get(ref.rsplit("/", 1)[-1]) if isinstance(ref, str) else schema
    if _schema_type(target) != "object" or not _properties(target):
        return typed(value, target)
    props = _properties(target)
    obj = filler(target, text, defs=defs)
    key = next((k for k in ANSWER_KEYS if k in props), None) or next(
        (k for k, sub in props.items() if _schema_type(sub) in ("number", "integer", "string")),
        next(iter(props)),
    )
    obj[key] = answer_value(value, props[key], text) if isinstance(obj, dict) else value
    return obj


def drawn_arguments(parameters: Any, value: str, task_text: str) -> dict[str, Any]:
    """A working tool's arguments, drawn from the task and the module's answer.

    A property that asks for the task (``query``, ``question``, ...) gets the
    task's text; every other required one carries the module's value in its
    type (``expression: "1014"`` for a calculator), so the arguments are the
    right ones when the module's answer is right and plausible wrong ones
    otherwise, never empty.
    """
    props = _properties(parameters)
    required = parameters.get("required") if isinstance(parameters, Mapping) else None
    args: dict[str, Any] = {}
    for name in required or list(props)[:1]:
        schema = props.get(name)
        kind = _schema_type(schema)
        if str(name).lower() in TASK_KEYS and kind == "string":
            args[str(name)] = task_text
        elif kind in ("string", "integer", "number"):
            shown = typed(value, schema)
            args[str(name)] = shown if kind == "string" or not isinstance(shown, str) else 0
        else:
            args[str(name)] = filler(schema, value)
    return args


def typed(value: str, schema: Any) -> Any:
    """``value`` as the JSON type ``schema`` asks for (text when it does not parse)."""
    kind = _schema_type(schema)
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return int(value) if value.strip().lstrip("-").isdigit() else float(value)
    except ValueError:
        return value
    if kind == "boolean" and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


def final_arguments(parameters: Any, value: str) -> dict[str, Any]:
    """A final-answer tool's arguments: the answer in its answer-like property.

    Every other required property gets a value of its own type (:func:`filler`:
    an enum's first member, a list, a flag; text fields empty), so a framework
    that validates the arguments against its output model (pydantic-ai's
    ``final_result``) accepts them; a bare placeholder (``""`` for a
    ``Literal`` field) failed its validation in every episode.
    """
    props = _properties(parameters)
    required = parameters.get("required") if isinstance(parameters, Mapping) else None
    found = parameters.get("$defs") if isinstance(parameters, Mapping) else None
    defs = found if isinstance(found, Mapping) else {}
    args = {str(n): filler(props.get(n), "", defs=defs) for n in required or ()}
    key = next((k for k in ANSWER_KEYS if k in props), None)
    if key is None:
        key = next(iter(args), None) or next(iter(props), "answer")
    args[key] = typed(value, props.get(key))
    return args


def delegation_arguments(parameters: Any, task_text: str) -> dict[str, Any]:
    """A delegation tool's arguments: the task text in its task-like property."""
    args = placeholder_arguments(parameters)
    props = _properties(parameters)
    key = next((k for k in TASK_KEYS if k in props), None)
    if key is not None and _schema_type(props.get(key)) == "string":
        args[key] = task_text
    return args


def called_tools(messages: Sequence[ChatMessage], offered: set[str]) -> set[str]:
    """Names of offered functions the conversation already called, in any written form."""
    called: set[str] = set()
    for m in messages:
        if m["role"] == "user":  # a framework's report of a call that failed
            called.update(n for n in _REPORTED_CALL.findall(m["content"]) if n in offered)
        if m["role"] != "assistant":
            continue
        text = m["content"]
        if "<tool_call>" in text:
            called.update(c.name for c in split_tool_calls(text)[1])
        for name in (*_NAME_FIELD.findall(text), *_ACTION.findall(text)):
            if name.strip() in offered:
                called.add(name.strip())
    return called


def first_user_text(messages: Sequence[ChatMessage], limit: int = 500) -> str:
    """The conversation's first user turn (what a manager passes on as the task)."""
    for m in messages:
        if m["role"] == "user":
            return m["content"][:limit]
    return ""


_TOOL_RESULT = ("Result of tool call", "Observation:", "Here is the final answer from")
_ANSWER_LINE = re.compile(r"^\s*(?:ANSWER|Final Answer)\s*:\s*(.+?)\s*$", re.M)


def reported_value(messages: Sequence[ChatMessage]) -> str | None:
    """The value a worker reported in the latest tool result, or None.

    A tool result is a user turn the gateway or the framework wrote for a call
    (``Result of tool call ...``, smolagents' ``Observation:``); its value is
    the answer field of a JSON object (a typed report), else the last
    ``ANSWER:`` (or ``Final Answer:``) line, else its last non-empty line.
    """
    for m in reversed(messages):
        if m["role"] != "user" or not m["content"].lstrip().startswith(_TOOL_RESULT):
            continue
        text = m["content"]
        structured = _json_answer(text.split("\n", 1)[-1])
        if structured is not None:
            return structured
        found = _ANSWER_LINE.findall(text)
        if found:
            return str(found[-1])
        lines = [ln.strip() for ln in text.splitlines()[1:] if ln.strip()]
        return lines[-1] if lines else None
    return None


def _json_answer(body: str) -> str | None:
    """The answer-like field of a tool result that is a JSON object (a typed report), or None.

    A framework returns a worker's typed output as JSON (pydantic-ai's agent
    delegation returns the worker's output model); its value is the field an
    answer goes in (:data:`ANSWER_KEYS`), a whole number written as one
    (``1164.0`` -> ``1164``, as a model would repeat it).
    """
    body = body.strip()
    if not body.startswith("{"):
        return None
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    key = next((k for k in ANSWER_KEYS if isinstance(obj, dict) and k in obj), None)
    if key is None or isinstance(obj[key], dict | list) or obj[key] is None:
        return None
    found = obj[key]
    if isinstance(found, float) and found.is_integer():
        return str(int(found))
    return str(found).lower() if isinstance(found, bool) else str(found)


def _answer_field(fields: Sequence[str]) -> str:
    return next((k for k in ANSWER_KEYS if k in fields), fields[-1])


def _wants_json(messages: Sequence[ChatMessage], response_format: Any) -> bool:
    if isinstance(response_format, Mapping) and response_format.get("type") in (
        "json_object",
        "json_schema",
    ):
        return True
    last = messages[-1]["content"] if messages else ""
    return "Respond with a JSON object" in last


def _schema(response_format: Any) -> Mapping[str, Any]:
    if not isinstance(response_format, Mapping):
        return {}
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    return schema if isinstance(schema, Mapping) else {}


def _is_text(schema: Any) -> bool:
    return _schema_type(schema) == "string" and not (
        isinstance(schema, Mapping) and ("enum" in schema or "$ref" in schema)
    )


def _field_text(value: Any) -> str:
    """One DSPy field's text: JSON for lists and objects, Python's words for flags."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, list | dict):
        return orjson.dumps(value).decode()
    return str(value)


def render(
    body: str, value: str | None, messages: Sequence[ChatMessage], response_format: Any = None
) -> str:
    """The answer text in the format the request asks for (see the module docstring).

    Every field that is not the answer gets a value of its own type
    (:func:`filler`); the answer field gets the module's value in its type.
    """
    fields = output_schema(messages)
    schema = _properties(_schema(response_format))
    if _wants_json(messages, response_format):
        types = schema or fields or {"reasoning": {}, "answer": {}}
        key = _answer_field(list(types))
        shown = "" if value is None else value
        obj = {
            n: answer_value(shown, sub, body) if n == key else filler(sub, body)
            for n, sub in types.items()
        }
        return orjson.dumps(obj).decode()
    if fields:
        key = _answer_field(list(fields))
        parts = []
        for name, sub in fields.items():
            if name != key or value is None:
                text = _field_text(filler(sub, body))
            elif len(fields) == 1 and key not in ANSWER_KEYS and _is_text(sub):
                text = f"{body}\nANSWER: {value}"
            else:
                text = _field_text(answer_value(value, sub, body))
            parts.append(f"[[ ## {name} ## ]]\n{text}\n")
        return "\n".join(parts) + "\n[[ ## completed ## ]]"
    if value is None:
        return body
    if any("Final Answer:" in m["content"] for m in messages if m["role"] != "assistant"):
        return f"{body}\nThought: I now know the final answer\nFinal Answer: {value}"
    return f"{body}\nANSWER: {value}"


__all__ = [
    "FINAL_TOOLS",
    "answer_value",
    "called_tools",
    "delegation_arguments",
    "drawn_arguments",
    "filler",
    "final_arguments",
    "first_user_text",
    "is_delegation_tool",
    "is_final_tool",
    "placeholder_arguments",
    "render",
    "reported_value",
    "typed",
]
