"""Parsing model text into sympy without ever running it as Python.

sympy's ``parse_expr`` compiles its input, so the text is screened first with
Python's tokenizer: only numbers, short names, brackets and arithmetic
operators pass; strings, attribute access, dunders, keywords (``lambda``,
``import``), keyword arguments and names of dangerous builtins are refused
with a one-line reason. Parsing then runs with a whitelist of sympy names and
no builtins, and without evaluation, so that :func:`check_size` can refuse
expressions whose value would be astronomically large (``9^9^9^9``, a huge
factorial) before anything is computed.
"""

from __future__ import annotations

import ast
import io
import keyword
import math
import token
import tokenize
from typing import Any

import sympy
from sympy.parsing.sympy_parser import (
    auto_number,
    auto_symbol,
    convert_xor,
    evaluateFalse,
    factorial_notation,
    implicit_multiplication_application,
    stringify_expr,
)

from environments.math.latex import LatexError, convert, strip_math

MAX_CHARS = 400
#: refuse when a value would have more than this many decimal digits
MAX_DIGITS = 20_000
#: largest exponent allowed on a symbolic base (expansion cost)
MAX_SYMBOLIC_EXPONENT = 200
MAX_FACTORIAL = 5_000


class CalcError(LatexError):
    """The expression was refused or could not be evaluated (a one-line reason)."""


_FUNCS: dict[str, Any] = {
    "sqrt": sympy.sqrt,
    "root": sympy.root,
    "cbrt": sympy.cbrt,
    "log": sympy.log,
    "ln": sympy.log,
    "exp": sympy.exp,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "cot": sympy.cot,
    "sec": sympy.sec,
    "csc": sympy.csc,
    "asin": sympy.asin,
    "acos": sympy.acos,
    "atan": sympy.atan,
    "Abs": sympy.Abs,
    "abs": sympy.Abs,
    "floor": sympy.floor,
    "ceiling": sympy.ceiling,
    "ceil": sympy.ceiling,
    "factorial": sympy.factorial,
    "binomial": sympy.binomial,
    "gcd": sympy.gcd,
    "lcm": sympy.lcm,
    "re": sympy.re,
    "im": sympy.im,
    "conjugate": sympy.conjugate,
    "arg": sympy.arg,
    "Max": sympy.Max,
    "Min": sympy.Min,
    "max": sympy.Max,
    "min": sympy.Min,
    "Mod": sympy.Mod,
    "mod": sympy.Mod,
    "expand": sympy.expand,
    "factor": sympy.factor,
    "simplify": sympy.simplify,
}
_CONSTANTS: dict[str, Any] = {
    "pi": sympy.pi,
    "i": sympy.I,
    "I": sympy.I,
    "e": sympy.E,
    "E": sympy.E,
    "oo": sympy.oo,
}
LOCALS: dict[str, Any] = {**_FUNCS, **_CONSTANTS}
_GLOBALS: dict[str, Any] = {
    "__builtins__": {},
    "Integer": sympy.Integer,
    "Float": sympy.Float,
    "Rational": sympy.Rational,
    "Symbol": sympy.Symbol,
    "Function": sympy.Function,
    "factorial": sympy.factorial,
    "Add": sympy.Add,
    "Mul": sympy.Mul,
    "Pow": sympy.Pow,
}
_TRANSFORMS = (
    auto_symbol,
    auto_number,
    factorial_notation,
    convert_xor,
    implicit_multiplication_application,
)
_OPS = {"+", "-", "*", "/", "**", "^", "(", ")", ",", "!", "%"}
_BANNED_NAMES = {
    "eval",
    "exec",
    "compile",
    "open",
    "getattr",
    "setattr",
    "delattr",
    "globals",
    "locals",
    "vars",
    "input",
    "breakpoint",
    "exit",
    "quit",
    "help",
    "dir",
    "type",
    "object",
    "os",
    "sys",
    "subprocess",
    "builtins",
    "sympify",
    "parse_expr",
}


def screen(text: str) -> None:
    """Refuse text that is not a plain arithmetic expression (raises CalcError)."""
    if len(text) > MAX_CHARS:
        raise CalcError(f"expression too long ({len(text)} characters; at most {MAX_CHARS})")
    if "__" in text:
        raise CalcError("'__' is not allowed in an expression")
    if any(q in text for q in "'\"`;:@&~{}[]\\#"):
        bad = next(q for q in "'\"`;:@&~{}[]\\#" if q in text)
        raise CalcError(f"character {bad!r} is not allowed in an expression")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
        raise CalcError(f"cannot read the expression: {exc}") from None
    depth = 0
    for tok in tokens:
        kind, value = tok.type, tok.string
        if kind in (token.NEWLINE, token.NL, token.ENDMARKER, token.INDENT, token.DEDENT):
            continue
        if kind == token.NUMBER:
            if value.lower().startswith(("0x", "0o", "0b")) or "_" in value or "j" in value.lower():
                raise CalcError(f"number {value!r} is not in a supported form")
            continue
        if kind == token.NAME:
            if keyword.iskeyword(value) or keyword.issoftkeyword(value):
                raise CalcError(f"the Python keyword {value!r} is not allowed")
            if value in _BANNED_NAMES or len(value) > 16:
                raise CalcError(f"the name {value!r} is not allowed")
            continue
        if kind == token.OP:
            if value == ".":
                raise CalcError("attribute access ('.') is not allowed")
            if value == "=":
                raise CalcError("'=' is only allowed between the two sides of an equation")
            if value not in _OPS:
                raise CalcError(f"operator {value!r} is not allowed")
            depth += {"(": 1, ")": -1}.get(value, 0)
            if depth < 0:
                raise CalcError("unbalanced parentheses")
            continue
        if kind == token.ERRORTOKEN and (value == "!" or not value.strip()):
            continue
        raise CalcError(f"unexpected {value!r} in the expression")
    if depth != 0:
        raise CalcError("unbalanced parentheses")


def to_plain(text: str) -> str:
    """LaTeX or plain text -> screened plain sympy syntax."""
    if len(text) > MAX_CHARS:
        raise CalcError(f"expression too long ({len(text)} characters; at most {MAX_CHARS})")
    if "__" in text:
        raise CalcError("'__' is not allowed in an expression")
    try:
        plain = convert(strip_math(text)).strip()
    except CalcError:
        raise
    except LatexError as exc:
        raise CalcError(str(exc)) from None
    if not plain:
        raise CalcError("the expression is empty")
    screen(plain)
    return plain


def parse(text: str) -> sympy.Expr:
    """Screen, check and parse one expression without evaluating it.

    The tokens are rewritten by sympy's transformations into a Python
    expression, which is checked node by node (only arithmetic and calls of
    whitelisted sympy names) and bounded in size before it is compiled with
    ``evaluate=False`` against a namespace without builtins.
    """
    plain = to_plain(text)
    local = dict(LOCALS)
    try:
        code = stringify_expr(plain, local, dict(_GLOBALS), _TRANSFORMS)
        tree = ast.parse(code, mode="eval")
    except Exception as exc:
        raise CalcError(f"cannot parse {text.strip()!r}: {type(exc).__name__}") from None
    _bound(tree.body)
    try:
        compiled = compile(evaluateFalse(code), "<expression>", "eval")
        expr = eval(compiled, dict(_GLOBALS), local)  # checked above: arithmetic only
    except CalcError:
        raise
    except Exception as exc:
        raise CalcError(f"cannot parse {text.strip()!r}: {type(exc).__name__}: {exc}") from None
    if not isinstance(expr, sympy.Basic):
        raise CalcError(f"{text.strip()!r} is not a mathematical expression")
    return expr


_NUMBER_CALLS = {"Integer", "Float", "Rational"}
_NAME_CALLS = {"Symbol", "Function"}


def _literal(node: ast.expr) -> float:
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        raise CalcError("unexpected construct in the expression")
    try:
        value = abs(float(node.value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise CalcError("number too large") from None
    return math.log10(value) if value > 1 else 0.0


def _at_least_one(node: ast.expr) -> bool:
    """Whether ``node`` is a number literal of absolute value >= 1 (division shrinks)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("Integer", "Float")
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
    ):
        try:
            return abs(float(node.args[0].value)) >= 1  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            return False
    return False


def _bound(node: ast.expr) -> tuple[float, bool]:
    """(upper bound of log10 |value|, depends on a symbol) for an allowed node.

    Anything but arithmetic, whitelisted names and calls of them is refused,
    and so is any power, factorial or exponential whose value would exceed
    the size limits: those are what turn a one-line input into hours of CPU.
    """
    if isinstance(node, ast.BinOp):
        a, sa = _bound(node.left)
        b, sb = _bound(node.right)
        sym = sa or sb
        if isinstance(node.op, ast.Pow):
            if b > 7:
                raise CalcError("exponent too large to compute")
            if sa and not sb and 10**b > MAX_SYMBOLIC_EXPONENT:
                raise CalcError(
                    f"exponent too large on a symbolic base (at most {MAX_SYMBOLIC_EXPONENT})"
                )
            size = a * 10**b
        elif isinstance(node.op, ast.Div) and _at_least_one(node.right):
            size = a
        elif isinstance(node.op, ast.Mult | ast.Div):
            size = a + b
        elif isinstance(node.op, ast.Add | ast.Sub | ast.Mod):
            size = max(a, b) + 1
        else:
            raise CalcError("operator not allowed in an expression")
        if size > MAX_DIGITS:
            raise CalcError(f"result too large (more than {MAX_DIGITS} digits)")
        return size, sym
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _bound(node.operand)
    if isinstance(node, ast.Name):
        if node.id not in LOCALS and node.id not in _GLOBALS:
            raise CalcError(f"unknown name {node.id!r}")
        return 1.0, False
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise CalcError("only plain function calls are allowed")
        name = node.func.id
        if name in _NUMBER_CALLS:
            return max((_literal(a) for a in node.args), default=0.0), False
        if name in _NAME_CALLS:
            if len(node.args) != 1 or not isinstance(node.args[0], ast.Constant):
                raise CalcError("unexpected construct in the expression")
            return 1.0, True
        if name not in LOCALS and name not in _GLOBALS:
            raise CalcError(f"unknown function {name!r}")
        parts = [_bound(a) for a in node.args]
        sym = any(s for _, s in parts)
        top = max((d for d, _ in parts), default=0.0)
        if name in ("factorial", "binomial"):
            if 10**top > MAX_FACTORIAL:
                raise CalcError(f"factorial too large (argument at most {MAX_FACTORIAL})")
            return 10**top * max(top, 1.0), sym
        if name == "exp":
            if top > 5:
                raise CalcError("exponential too large to compute")
            return 10**top, sym
        return sum(d for d, _ in parts) + 1, sym
    if isinstance(node, ast.Call | ast.Attribute | ast.Subscript | ast.Lambda):
        raise CalcError("only arithmetic expressions are allowed")
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return _literal(node), False
    raise CalcError("only arithmetic expressions are allowed")


__all__ = ["LOCALS", "CalcError", "parse", "screen", "to_plain"]
