"""Scorers: how an external agent's ``{"answer": ...}`` becomes a reward.

Built in: ``final`` (the default: the final answer read out of a framework's
usual final output, then ``exact``, or the same number when both are
numbers; see :func:`final_answer`), ``exact`` (same text after trimming and
case-folding), ``contains``
(the expected answer appears in the agent's), ``numeric`` (the same number:
``0.5``, ``1/2``, ``50%``, ``1,000`` and ``$3`` read as numbers, relative
tolerance 1e-6), ``regex`` (the task's ``answer`` is a pattern that must match
somewhere in the agent's answer). ``MODULE:FUNC`` names the user's own
``FUNC(result, task) -> float | bool | dict`` (``task`` includes ``answer``;
a dict gives ``reward`` and optionally ``success``).

The agent does not score itself: when the run has a scorer or the task has
an answer, a ``reward`` or ``success`` in the agent's result is kept in the
record but decides nothing (an agent, or the model inside it, could print
``"reward": 1`` for any answer). ``result`` is the explicit choice to trust
it (``--scorer result``: the agent checks its own work, e.g. against a test
suite agentbus cannot run); a task without an answer and no scorer also
falls back to the result's reward, as there is nothing else to go by.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from agentbus.core.errors import UserError
from agentbus.safepath import import_named

Scorer = Callable[[Mapping[str, Any], Mapping[str, Any]], Any]

BUILTIN = ("final", "exact", "contains", "numeric", "regex", "result")

#: the scorer a run without ``--scorer`` uses
DEFAULT = "final"

#: ``--scorer result``: the agent's own reward decides
TRUST_RESULT = "result"


def _text(value: Any) -> str:
    return " ".join(str(value).split()).casefold() if value is not None else ""


def exact(result: Mapping[str, Any], task: Mapping[str, Any]) -> bool:
    return _text(result.get("answer")) == _text(task.get("answer"))


def contains(result: Mapping[str, Any], task: Mapping[str, Any]) -> bool:
    expected = _text(task.get("answer"))
    return bool(expected) and expected in _text(result.get("answer"))


_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")


def parse_number(value: Any) -> float | None:
    """A number from an answer: ``3``, ``-0.25``, ``1/2``, ``50%``, ``1,000``, ``$3``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().replace(",", "").replace("$", "").replace(" ", "")
    if text.endswith("%"):
        inner = parse_number(text[:-1])
        return None if inner is None else inner / 100
    if text.count("/") == 1:
        num, den = text.split("/")
        if _NUMBER.match(num) and _NUMBER.match(den):
            try:
                return float(Fraction(num) / Fraction(den))
            except (ZeroDivisionError, ValueError):
                return None
    return float(text) if _NUMBER.match(text) else None


def numeric(result: Mapping[str, Any], task: Mapping[str, Any]) -> bool:
    got, want = parse_number(result.get("answer")), parse_number(task.get("answer"))
    if got is None or want is None:
        return False
    return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)


def regex(result: Mapping[str, Any], task: Mapping[str, Any]) -> bool:
    pattern = task.get("answer")
    if not isinstance(pattern, str):
        return False
    try:
        return re.search(pattern, str(result.get("answer", ""))) is not None
    except re.error:
        return False


_ANSWER_LINE = re.compile(r"^\W*(?:final[ _]answer|answer)\W*[:=]\s*(.+?)\s*$", re.I | re.M)
_FINAL_CALL = re.compile(r"final_answer\s*\(\s*(?:answer\s*=\s*)?(.+?)\s*\)\s*$", re.S)
#: keys of a JSON final output that hold the answer, in order of preference
ANSWER_KEYS = ("answer", "final_answer", "result", "output", "response", "value")


def final_answer(value: Any) -> str:
    """The final answer inside a framework's usual final output, as text.

    Read in this order: a JSON object (or a dict) -> its ``answer``-like field
    (:data:`ANSWER_KEYS`, recursively); text whose last ``ANSWER:``,
    ``Final Answer:`` or ``answer =`` line gives it (CrewAI's and ReAct's
    prose, the simulator's plain form); a ``final_answer(...)`` call
    (smolagents' code); else the text itself, trimmed. ``None`` is ``""``.
    """
    if value is None:
        return ""
    if isinstance(value, Mapping):
        key = next((k for k in ANSWER_KEYS if k in value), None)
        return final_answer(value[key]) if key is not None else str(dict(value))
    if isinstance(value, bool | int | float):
        return str(value)
    text = str(value).strip()
    if text.startswith("{") and text.endswith("}"):
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and any(k in obj for k in ANSWER_KEYS):
            return final_answer(obj)
    found = _ANSWER_LINE.findall(text)
    if found:
        return str(found[-1]).strip().strip("`*\"' ")
    call = _FINAL_CALL.search(text)
    if call:
        return call.group(1).strip().strip("\"'")
    return text


def final(result: Mapping[str, Any], task: Mapping[str, Any]) -> bool:
    """The default: the final answer (:func:`final_answer`) is the expected one."""
    got, want = final_answer(result.get("answer")), final_answer(task.get("answer"))
    if _text(got) == _text(want):
        return True
    a, b = parse_number(got), parse_number(want)
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def readable(result: Mapping[str, Any], task: Mapping[str, Any]) -> bool:
    """Whether the answer has the form the expected one has (a number for a number).

    What the run's "nothing fit" guard counts: most answers unreadable means
    the agent's output and the scorer do not fit, not that the agent is wrong.
    """
    got = final_answer(result.get("answer"))
    if not got:
        return False
    return parse_number(final_answer(task.get("answer"))) is None or parse_number(got) is not None


_BUILTINS: dict[str, Scorer] = {
    "final": final,
    "exact": exact,
    "contains": contains,
    "numeric": numeric,
    "regex": regex,
}


def load_scorer(name: str) -> Scorer:
    """A built-in scorer by name, or ``MODULE:FUNC`` imported (one-line UserError otherwise)."""
    if name in _BUILTINS:
        return _BUILTINS[name]
    if name == TRUST_RESULT:
        return trust_result
    fn = load_callable(name, "--scorer", f"or one of {', '.join(BUILTIN)}")
    return fn


def trust_result(result: Mapping[str, Any], task: Mapping[str, Any]) -> dict[str, Any]:
    """``--scorer result``: the agent's own ``reward`` (and ``success``), 0 without one."""
    reward = _reward(result.get("reward", 0.0))
    return {"reward": reward, "success": bool(result.get("success", reward >= 1.0))}


def load_callable(name: str, flag: str, alternatives: str = "") -> Any:
    """``MODULE:FUNC`` -> the object; every failure is one clear line naming ``flag``."""
    module_name, sep, attr = name.partition(":")
    if not sep or not module_name or not attr:
        tail = f" {alternatives}" if alternatives else ""
        raise UserError(f"{flag} {name!r}: expected MODULE:FUNC{tail}")
    try:
        module = import_named(module_name)  # the start directory too (agentbus/safepath.py)
    except Exception as exc:
        raise UserError(
            f"{flag} {name!r}: cannot import {module_name!r}: {type(exc).__name__}: {exc}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise UserError(f"{flag} {name!r}: {module_name!r} has no {attr!r}")
    if not callable(obj):
        raise UserError(f"{flag} {name!r}: {attr!r} is not callable")
    return obj


def verdict(
    result: Mapping[str, Any], task: Mapping[str, Any], scorer: Scorer | None
) -> tuple[float, bool, str]:
    """(reward, success, how) for one result: the scorer's, or the result's own when trusted.

    The result's ``reward`` decides only under ``--scorer result``, or when
    there is neither a scorer nor an answer to score against. ``success``
    defaults to a full reward. A reward outside [0, 1] is clipped; a scorer
    that raises scores 0 (the reason is kept in the record).
    """
    if scorer is trust_result or (scorer is None and "answer" not in task and "reward" in result):
        own = trust_result(result, task)
        return own["reward"], own["success"], "result"
    if scorer is None:
        scorer = final
    try:
        value = scorer(result, task)
        if inspect.isawaitable(value):
            raise TypeError("the scorer must be a plain function, not a coroutine")
    except Exception as exc:
        return 0.0, False, f"scorer failed: {type(exc).__name__}: {exc}"
    if isinstance(value, Mapping):
        reward = _reward(value.get("reward", 0.0))
        return reward, bool(value.get("success", reward >= 1.0)), "scorer"
    reward = _reward(value)
    return reward, reward >= 1.0, "scorer"


def _reward(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(number):
        return 0.0
    return min(1.0, max(0.0, number))


__all__ = [
    "ANSWER_KEYS",
    "BUILTIN",
    "DEFAULT",
    "TRUST_RESULT",
    "Scorer",
    "final",
    "final_answer",
    "load_callable",
    "load_scorer",
    "parse_number",
    "readable",
    "trust_result",
    "verdict",
]
