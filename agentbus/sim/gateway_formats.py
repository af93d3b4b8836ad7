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
* **Tools.** A final-answer tool (smolagents' ``final_answer``, a
  ``submit``/``finish`` function) ends the module's turn, so it is called last
  and carries the answer in its arguments; delegation tools (handoffs,
  smolagents' managed agents, CrewAI's coworker tools) carry the task text.
  Earlier calls are recognised in every form frameworks write them back:
  the gateway's ``<tool_call>`` blocks, and tool calls written into assistant
  text (smolagents' ``Calling tools: [{... 'name': 'calculator' ...}]``,
  JSON ``"name": "..."``, ReAct's ``Action: ...``).

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

_NAME_FIELD = re.compile(r"""['"]name['"]\s*:\s*['"]([^'"]+)['"]""")
_ACTION = re.compile(r"^\s*Action\s*:\s*`?([\w.\- ]+?)`?\s*$", re.M)
_OUTPUT_FIELDS = re.compile(
    r"Your output fields are:\s*\n(.*?)(?:All interactions will be|\[\[ ## |\Z)", re.S
)
_FIELD_LINE = re.compile(r"^\s*\d+\.\s*`([^`]+)`", re.M)


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


def typed(value: str, schema: Any) -> Any:
    """``value`` as the JSON type ``schema`` asks for (text when it does not parse)."""
    kind = _schema_type(schema)
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
    except ValueError:
        return value
    return value


def final_arguments(parameters: Any, value: str) -> dict[str, Any]:
    """A final-answer tool's arguments: the answer in its answer-like property."""
    args = placeholder_arguments(parameters)
    props = _properties(parameters)
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
    the last ``ANSWER:`` (or ``Final Answer:``) line, else its last non-empty
    line.
    """
    for m in reversed(messages):
        if m["role"] != "user" or not m["content"].lstrip().startswith(_TOOL_RESULT):
            continue
        text = m["content"]
        found = _ANSWER_LINE.findall(text)
        if found:
            return str(found[-1])
        lines = [ln.strip() for ln in text.splitlines()[1:] if ln.strip()]
        return lines[-1] if lines else None
    return None


def output_fields(messages: Sequence[ChatMessage]) -> list[str]:
    """DSPy's output field names (from its adapters' system prompt), or none."""
    for m in messages:
        if m["role"] != "system" or "Your output fields are" not in m["content"]:
            continue
        section = _OUTPUT_FIELDS.search(m["content"])
        if section:
            return _FIELD_LINE.findall(section.group(1))
    return []


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


def render(
    body: str, value: str | None, messages: Sequence[ChatMessage], response_format: Any = None
) -> str:
    """The answer text in the format the request asks for (see the module docstring)."""
    fields = output_fields(messages)
    schema = _properties(_schema(response_format))
    if _wants_json(messages, response_format):
        names = list(schema) or fields or ["reasoning", "answer"]
        key = _answer_field(names)
        shown = "" if value is None else value
        obj = {n: typed(shown, schema.get(n)) if n == key else body for n in names}
        return orjson.dumps(obj).decode()
    if fields:
        key = _answer_field(fields)
        parts = []
        for name in fields:
            if name != key:
                text = body
            elif value is None:
                text = body
            elif len(fields) == 1 and key not in ANSWER_KEYS:
                text = f"{body}\nANSWER: {value}"
            else:
                text = value
            parts.append(f"[[ ## {name} ## ]]\n{text}\n")
        return "\n".join(parts) + "\n[[ ## completed ## ]]"
    if value is None:
        return body
    if any("Final Answer:" in m["content"] for m in messages if m["role"] != "assistant"):
        return f"{body}\nThought: I now know the final answer\nFinal Answer: {value}"
    return f"{body}\nANSWER: {value}"


__all__ = [
    "FINAL_TOOLS",
    "called_tools",
    "delegation_arguments",
    "final_arguments",
    "first_user_text",
    "is_delegation_tool",
    "is_final_tool",
    "output_fields",
    "placeholder_arguments",
    "render",
    "reported_value",
    "typed",
]
