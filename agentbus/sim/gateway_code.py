"""Answers in code, for agents whose prompt asks the model to act by writing code.

A code agent (smolagents' ``CodeAgent``, and any prompt in its style) does
not offer functions in the request: its system prompt lists them as Python
signatures (``def calculator(expression: str) -> str:``) and asks for one
block of code per step, opened and closed with tags it names ("opened with
'<code>', and closed with '</code>'") or in a fenced ````py`` block. The
agent runs the block and ends when the code calls ``final_answer(...)``.

The simulator's generic gateway model writes such a block the way it calls
functions (:func:`agentbus.sim.gateway_model.tool_call`): each listed
function the conversation's code has not called yet is called once, in
order, with arguments drawn from the task and the module's answer
(:func:`agentbus.sim.gateway_formats.drawn_arguments`), its result printed;
the call is the block's last expression, so its value is the step's
observation (a worker's report, which a wrong module repeats as it does a
function's result); once every one was called, the block calls
``final_answer`` with the
module's answer (a number as a number). Routing never depends on the
verdict, so an agent's truth still follows from its own logic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agentbus.llm.types import ChatMessage
from agentbus.sim import gateway_formats as formats

_TAGS = re.compile(r"opened with '([^'\n]+)', and closed with '([^'\n]+)'")
_FENCED = re.compile(r"```(?:py|python)\b")
_SIGNATURE = re.compile(r"^\s*def (\w+)\(([^\n]*)\)\s*->\s*[^\n]*:\s*$", re.M)
_CODE_WORDS = ("code blob", "Python code", "in code", "write code", "code sequence")
#: parameters of a listed function the model leaves out (smolagents' managed agents have one)
_OPTIONAL = frozenset({"additional_args", "kwargs"})
#: a signature's type names -> the JSON type of the value passed
_TYPES = {
    **{k: "string" for k in ("str", "string", "any")},
    **{k: "integer" for k in ("int", "integer")},
    **{k: "number" for k in ("float", "number")},
    **{k: "boolean" for k in ("bool", "boolean")},
}


def code_tags(messages: Sequence[ChatMessage]) -> tuple[str, str] | None:
    """The (opening, closing) tags the system prompt asks code in, or None (no code asked)."""
    for m in messages:
        if m["role"] != "system":
            continue
        text = m["content"]
        named = _TAGS.search(text)
        if named:
            return named.group(1), named.group(2)
        if _FENCED.search(text) and any(w in text for w in _CODE_WORDS):
            return "```py", "```"
    return None


def workers(messages: Sequence[ChatMessage]) -> bool:
    """Whether the code prompt lists a delegation (a managed agent that reports back)."""
    return any(formats.is_delegation_tool(n, p) for n, p in listed_functions(messages))


def listed_functions(messages: Sequence[ChatMessage]) -> list[tuple[str, dict[str, Any]]]:
    """The functions the system prompt lists as Python signatures: (name, JSON parameters)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for m in messages:
        if m["role"] != "system":
            continue
        for name, params in _SIGNATURE.findall(m["content"]):
            props: dict[str, Any] = {}
            for part in _split_params(params):
                arg, _, kind = part.partition(":")
                arg = arg.strip()
                if arg and arg not in _OPTIONAL and "=" not in part and not arg.startswith("*"):
                    props[arg] = {"type": _TYPES.get(kind.strip(), "object")}
            if name not in {n for n, _ in out}:
                out.append((name, {"properties": props, "required": list(props)}))
    return out


def _split_params(params: str) -> list[str]:
    """``a: str, b: dict[str, Any]`` -> its parameters (commas inside brackets kept)."""
    parts, depth, current = [], 0, ""
    for ch in params:
        depth += int(ch in "[(")
        depth -= int(ch in "])")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [p for p in (*parts, current) if p.strip()]


def _called_in_code(messages: Sequence[ChatMessage], name: str) -> bool:
    pattern = re.compile(rf"\b{re.escape(name)}\s*\(")
    return any(m["role"] == "assistant" and pattern.search(m["content"]) for m in messages)


def _literal(value: Any) -> str:
    return repr(value)


def code_answer(
    body: str, value: str | None, messages: Sequence[ChatMessage], tags: tuple[str, str]
) -> str:
    """One step of a code agent: a thought, then a block (see the module docstring)."""
    opening, closing = tags
    if any(c in opening for c in "(?|"):  # a pattern (smolagents' markdown pair): write one
        opening = "```py"
    opening = opening.replace("\\", "")  # tags given as regex text
    closing = closing.replace("\\n", "\n").replace("\\", "")
    shown = "" if value is None else value
    task = formats.first_user_text(messages)
    for name, params in listed_functions(messages):
        if formats.is_final_tool(name) or _called_in_code(messages, name):
            continue
        if formats.is_delegation_tool(name, params):
            args = formats.delegation_arguments(params, task)
        else:
            args = formats.drawn_arguments(params, shown, task)
        call = ", ".join(f"{k}={_literal(v)}" for k, v in args.items())
        code = f"{name}({call})"  # the last expression: its value is the observation
        return f"Thought: {body}\n{opening}\n{code}\n{closing.strip() or closing}"
    answer = formats.typed(shown, {"type": "number"})
    code = f"final_answer({_literal(answer)})"
    return f"Thought: {body}\n{opening}\n{code}\n{closing.strip() or closing}"


__all__ = ["code_answer", "code_tags", "listed_functions", "workers"]
