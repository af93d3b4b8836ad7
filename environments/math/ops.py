"""The sympy work of the math tools: run inside the worker processes only.

Everything here may be slow or huge on adversarial input, so it is only ever
called through :mod:`environments.math.pool`, which runs it in a separate
process and kills that process when it overruns its time limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import sympy

from environments.math.latex import boxed, strip_math
from environments.math.safeparse import CalcError, parse

MAX_RESULT_CHARS = 1_000
_RELATION = re.compile(r"(?<![<>!=])=(?!=)")


def split_top(text: str, seps: str) -> list[str]:
    """Split at ``seps`` outside any brackets."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch in seps and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def show(value: sympy.Basic) -> str:
    """Plain, LaTeX-friendly text for a sympy value (``^`` for powers, ``i``)."""
    text = sympy.sstr(value).replace("**", "^")
    text = re.sub(r"\bI\b", "i", text)
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"... ({len(text)} characters in all)"
    return text


def approx(value: sympy.Basic) -> str:
    """A short decimal approximation (12 significant digits, no trailing zeros)."""
    if value.is_real:
        return f"{float(sympy.N(value, 15)):.12g}"
    real, imag = (float(sympy.N(p, 15)) for p in value.as_real_imag())
    return f"{real:.12g} {'-' if imag < 0 else '+'} {abs(imag):.12g}*i"


def _tidy(value: sympy.Basic) -> sympy.Basic:
    value = value.doit()
    if value.is_Rational or value.is_Float:
        return value
    if value.is_number:
        return (
            sympy.nsimplify(value)
            if value.is_Float and value == int(value)
            else (
                sympy.simplify(sympy.expand_complex(value))
                if value.has(sympy.I)
                else sympy.simplify(value)
            )
        )
    if sympy.count_ops(value) < 200:
        return sympy.simplify(value)
    return value


def calculate(text: str) -> str:
    """Evaluate an expression, or solve equations ``lhs = rhs`` (separated by , or ;)."""
    text = text.strip()
    if _RELATION.search(text):
        return _solve(text)
    value = _tidy(parse(text))
    out = show(value)
    exact = value.is_number and all(p.is_Integer for p in value.as_real_imag())
    if value.is_number and not exact and not value.is_Float and value.is_finite:
        out += f" ≈ {approx(value)}"
    return out


def _by_name(item: tuple[sympy.Basic, sympy.Basic]) -> str:
    return str(item[0])


def _solve(text: str) -> str:
    eqs = []
    for part in split_top(text, ",;"):
        sides = _RELATION.split(part)
        if len(sides) != 2:
            raise CalcError(f"write one '=' per equation: {part!r}")
        eqs.append(sympy.Eq(parse(sides[0]).doit(), parse(sides[1]).doit()))
    symbols = sorted(set().union(*(e.free_symbols for e in eqs)), key=str)
    if not symbols:
        return "true" if all(e == sympy.true for e in eqs) else "false"
    solutions = sympy.solve(eqs, symbols, dict=True)
    if not solutions:
        return "no solution"
    rendered = [
        ", ".join(
            f"{k} = {show(_tidy(v))}" for k, v in sorted(sol.items(), key=lambda kv: str(kv[0]))
        )
        for sol in solutions
    ]
    return " or ".join(rendered)


# -- answer equivalence ------------------------------------------------------------------

_VAR_PREFIX = re.compile(r"^[a-zA-Z](?:_\{?\w+\}?)?\s*=(?!=)")


def normalise(text: str) -> str:
    """Canonical text of an answer: no delimiters, boxes, sizing, units or spaces."""
    s = strip_math(text)
    inner = boxed(s)
    if inner is not None:
        s = inner
    s = re.sub(r"\\text\{\s*(?:[a-zA-Z ]*units?|[a-zA-Z ]+)\s*\}", "", s)
    for a, b in (("\\dfrac", "\\frac"), ("\\tfrac", "\\frac"), ("\\left", ""), ("\\right", "")):
        s = s.replace(a, b)
    s = re.sub(r"\\[,;!: ]|\\quad|\\qquad|~", "", s)
    s = re.sub(r"\^\{?\\circ\}?|\\%|\\\$|°", "", s)
    s = s.replace("{,}", "")
    s = re.sub(r"\s+", "", s).rstrip(".")
    s = re.sub(r"^[a-zA-Z]\\in", "", s)
    if _VAR_PREFIX.match(s) and s.count("=") == 1:
        s = _VAR_PREFIX.sub("", s)
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", s):
        s = s.replace(",", "")
    return s


def _items(s: str) -> tuple[str, list[str]]:
    """Classify an answer: ('set'|'list'|'(]'-style brackets|'scalar', parts)."""
    if s.startswith("\\{") and s.endswith("\\}"):
        return "set", split_top(s[2:-2], ",")
    if "\\cup" in s:
        return "set", [p for p in s.split("\\cup") if p]
    if len(s) >= 2 and s[0] in "([" and s[-1] in ")]":
        inner = split_top(s[1:-1], ",")
        if len(inner) > 1 and len(split_top(s, ",")) == 1:
            return s[0] + s[-1], inner
    if "\\pm" in s:
        a, b = s.split("\\pm", 1)
        return "set", [f"{a}+({b})", f"{a}-({b})"]
    parts = [p for p in re.split(r",|\\text\{or\}|\\text\{and\}|\bor\b|\band\b", s) if p.strip()]
    if len(parts) > 1:
        return "set", [_VAR_PREFIX.sub("", p.strip()) for p in parts]
    return "scalar", [s]


def _tolerance(reference: str, value: complex) -> float:
    """A rounded decimal reference (214.29) accepts anything that rounds to it."""
    m = re.fullmatch(r"-?\d+\.(\d+)", reference)
    rel = 1e-9 * max(1.0, abs(value))
    return max(rel, 0.5 * 10 ** -len(m.group(1)) + 1e-12) if m else rel


def _equation_equal(given: str, expected: str) -> bool:
    """Two equations are the same when one side-difference is a multiple of the other."""
    g, e = (_RELATION.split(x) for x in (given, expected))
    if len(g) != 2 or len(e) != 2:
        return False
    a = parse(g[0]).doit() - parse(g[1]).doit()
    b = parse(e[0]).doit() - parse(e[1]).doit()
    if b == 0:
        return bool(sympy.simplify(a) == 0)
    ratio = sympy.simplify(a / b)
    return bool(ratio.is_number and ratio != 0)


def _scalar_equal(given: str, expected: str) -> bool:
    if given == expected:
        return True
    if _RELATION.search(expected):
        return bool(_RELATION.search(given)) and _equation_equal(given, expected)
    a = parse(given).doit()
    b = parse(expected).doit()
    if a == b:
        return True
    if a.is_number and b.is_number:
        try:
            av, bv = complex(sympy.N(a, 30)), complex(sympy.N(b, 30))
        except (TypeError, ValueError):
            return False
        return abs(av - bv) <= _tolerance(expected, bv)
    return bool(sympy.simplify(a - b) == 0)


def _match_unordered(given: list[str], expected: list[str]) -> bool:
    left = list(given)
    for e in expected:
        hit = next((g for g in left if _same(g, e)), None)
        if hit is None:
            return False
        left.remove(hit)
    return not left


def _same(g: str, e: str) -> bool:
    """Structural equivalence of two normalised answers (recursing into their parts)."""
    if g == e:
        return True
    gk, gi = _items(g)
    ek, ei = _items(e)
    if ek == "scalar" and gk == "scalar":
        try:
            return _scalar_equal(g, e)
        except CalcError:
            return False
    if ek == "set" and gk == "set":
        return len(gi) == len(ei) and _match_unordered(gi, ei)
    if gk == ek and len(gi) == len(ei):
        return all(_same(a, b) for a, b in zip(gi, ei, strict=True))
    return False


def equivalent(given: str, expected: str) -> bool:
    """Whether the given answer means the expected one (exact, or per rounding)."""
    g, e = normalise(given), normalise(expected)
    return bool(g) and _same(g, e)


OPS: dict[str, Callable[..., Any]] = {
    "calculate": calculate,
    "equivalent": equivalent,
    "normalise": normalise,
}

__all__ = ["OPS", "calculate", "equivalent", "normalise", "show", "split_top"]
