"""LaTeX to plain sympy syntax, by hand.

Models write maths in LaTeX (``\\frac{1}{2}``, ``\\sqrt[3]{x}``, ``2^{10}``) or in
plain text (``1/2``, ``sqrt(2)``). This translator turns the LaTeX subset that
appears in school algebra and geometry into the plain form, which then goes
through the restricted sympy parser. Doing it by hand (rather than with
sympy's ANTLR-based ``parse_latex``) keeps the parser a pure, fast string
transformation with no extra runtime dependency and a clear error for
anything it does not know.
"""

from __future__ import annotations

import re

from agentbus import UserError


class LatexError(UserError):
    """The text uses LaTeX the translator does not understand."""


#: commands rendered as a plain token
_SYMBOLS: dict[str, str] = {
    "pi": " pi ",
    "infty": " oo ",
    "cdot": "*",
    "times": "*",
    "ast": "*",
    "div": "/",
    "le": "<=",
    "leq": "<=",
    "ge": ">=",
    "geq": ">=",
    "lt": "<",
    "gt": ">",
    "neq": "!=",
    "ne": "!=",
    "%": "",
    "$": "",
    "{": "\\{",
    "}": "\\}",
    "cup": " \\cup ",
    "pm": " \\pm ",
    "in": " \\in ",
    "theta": " theta ",
    "alpha": " alpha ",
    "beta": " beta ",
    "mid": "|",
    "vert": "|",
    "lvert": "|",
    "rvert": "|",
    "circ": "",
    "degree": "",
    "prime": "'",
}
#: functions: the sympy name they become
_FUNCS: dict[str, str] = {
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "cot": "cot",
    "sec": "sec",
    "csc": "csc",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "ln": "log",
    "exp": "exp",
    "lfloor": "floor(",
    "rfloor": ")",
    "lceil": "ceiling(",
    "rceil": ")",
    "gcd": "gcd",
    "operatorname": "",
}
#: commands whose argument is dropped (units, labels)
_DROP_ARG = {"text", "textbf", "textit", "mbox", "mathrm", "mathbf", "hbox", "unit"}
#: commands that only affect spacing or sizing
_IGNORE = {
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "bigl",
    "bigr",
    "Bigl",
    "Bigr",
    "displaystyle",
    "textstyle",
    "quad",
    "qquad",
    ",",
    ";",
    "!",
    ":",
    " ",
}

_COMMAND = re.compile(r"\\([a-zA-Z]+|.)")


def _group(s: str, i: int) -> tuple[str, int]:
    """The body of the ``{...}`` group starting at ``s[i] == '{'`` and the index after it."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{" and (j == 0 or s[j - 1] != "\\"):
            depth += 1
        elif s[j] == "}" and (j == 0 or s[j - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return s[i + 1 : j], j + 1
    raise LatexError("unbalanced braces in the LaTeX expression")


def _command(s: str, i: int) -> re.Match[str]:
    """The ``\\command`` starting at ``s[i]``; a backslash at the end or before a
    newline starts none, and model text has both (found by tests/modules/test_fuzz_parsers.py)."""
    m = _COMMAND.match(s, i)
    if m is None:
        raise LatexError(f"a backslash at character {i + 1} starts no LaTeX command")
    return m


def _arg(s: str, i: int) -> tuple[str, int]:
    """One macro argument: a ``{group}``, a ``\\command`` or a single character."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        raise LatexError("a LaTeX command is missing its argument")
    if s[i] == "{":
        return _group(s, i)
    if s[i] == "\\":
        m = _command(s, i)
        return m.group(0), m.end()
    return s[i], i + 1


def _paren_arg(s: str, i: int) -> tuple[str, int]:
    """A function argument: a group, a parenthesised span, or the next token."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i < len(s) and s[i] == "(":
        depth = 0
        for j in range(i, len(s)):
            depth += {"(": 1, ")": -1}.get(s[j], 0)
            if depth == 0:
                return s[i + 1 : j], j + 1
        raise LatexError("unbalanced parentheses in the LaTeX expression")
    m = re.compile(r"[0-9.]+|[a-zA-Z]").match(s, i)
    if m is not None and (i >= len(s) or s[i] != "{"):
        return m.group(0), m.end()
    return _arg(s, i)


def boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces nested."""
    starts = [m.end() for m in re.finditer(r"\\(?:boxed|fbox)\s*(?=\{)", text)]
    if not starts:
        return None
    try:
        body, _ = _group(text, starts[-1])
    except LatexError:
        return None
    return body.strip()


def convert(s: str) -> str:
    """Translate LaTeX (or plain text, which passes through) into sympy syntax."""
    out: list[str] = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            m = _command(s, i)
            name = m.group(1)
            i = m.end()
            if name in ("frac", "dfrac", "tfrac", "cfrac"):
                a, i = _arg(s, i)
                b, i = _arg(s, i)
                out.append(f"(({convert(a)})/({convert(b)}))")
            elif name == "binom":
                a, i = _arg(s, i)
                b, i = _arg(s, i)
                out.append(f"binomial({convert(a)}, {convert(b)})")
            elif name == "sqrt":
                index = None
                if i < n and s[i] == "[":
                    close = s.find("]", i)
                    if close < 0:
                        raise LatexError("unclosed [ in \\sqrt[n]{...}")
                    index, i = s[i + 1 : close], close + 1
                a, i = _arg(s, i)
                body = convert(a)
                out.append(f"root({body}, {convert(index)})" if index else f"sqrt({body})")
            elif name == "log":
                base = None
                if i < n and s[i] == "_":
                    base, i = _arg(s, i + 1)
                x, i = _paren_arg(s, i)
                base_txt = f", {convert(base)}" if base is not None else ""
                out.append(f" log({convert(x)}{base_txt}) ")
            elif name in ("boxed", "fbox"):
                a, i = _arg(s, i)
                out.append(convert(a))
            elif name in _DROP_ARG:
                _, i = _arg(s, i)
                out.append(" ")
            elif name in _IGNORE:
                if name in ("left", "right") and i < n and s[i] == ".":
                    i += 1
                out.append(" ")
            elif name in _FUNCS:
                out.append(f" {_FUNCS[name]}")
            elif name in _SYMBOLS:
                out.append(_SYMBOLS[name])
            else:
                raise LatexError(f"unsupported LaTeX command \\{name}")
        elif c == "^":
            i += 1
            while i < n and s[i] == " ":
                i += 1
            if s.startswith("\\circ", i):
                i += len("\\circ")
                continue
            if i < n and s[i] == "{":
                a, i = _group(s, i)
                if a.strip() in ("\\circ", "circ", "o"):
                    continue
                out.append(f"**({convert(a)})")
            else:
                out.append("**")
        elif c == "_":
            a, i = _arg(s, i + 1)
            out.append(re.sub(r"\W", "", convert(a)))
        elif c == "{":
            a, i = _group(s, i)
            out.append(f"({convert(a)})")
        elif c == "}":
            raise LatexError("unbalanced braces in the LaTeX expression")
        elif c in "$~":
            out.append(" ")
            i += 1
        else:
            out.append(c)
            i += 1
    return _bars("".join(out))


def _bars(s: str) -> str:
    """``|x|`` pairs become ``Abs(x)`` (alternating open/close, no nesting)."""
    if "|" not in s:
        return s
    if s.count("|") % 2:
        raise LatexError("unpaired | in the expression")
    parts = s.split("|")
    out = [parts[0]]
    for k, part in enumerate(parts[1:]):
        out.append("Abs(" if k % 2 == 0 else ")")
        out.append(part)
    return "".join(out)


def strip_math(text: str) -> str:
    """Remove math delimiters and a trailing full stop around an expression."""
    t = text.strip()
    for a, b in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$")):
        if t.startswith(a) and t.endswith(b) and len(t) >= len(a) + len(b):
            t = t[len(a) : len(t) - len(b)].strip()
    return t.rstrip(".").strip()


__all__ = ["LatexError", "boxed", "convert", "strip_math"]
