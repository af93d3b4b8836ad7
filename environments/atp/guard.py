"""Refusing proofs that cheat, before any prover runs.

Coq: ``Admitted``/``admit``/``Abort``, new assumptions (``Axiom``,
``Parameter``, ``Hypothesis``, ``Variable``, ``Context``, ``Conjecture``...),
notations, file and plugin commands (``Redirect``, ``Load``, ``Declare``), any new
declaration (which could redefine the proposition after closing the real
one), or a proof that does not end with exactly one ``Qed.``/``Defined.``.
Comments are dropped and string contents blanked first, in one linear pass
that knows Coq's lexing (comments nest, a string inside a comment is still a
string, ``""`` is a quote inside a string), so ``idtac "(*"`` cannot hide the
words that follow it. This is early feedback only: a list of words cannot
decide whether a proof is sound, and the verdict comes from
:mod:`environments.atp.coq`, which checks the compiled theorem separately.
"""

from __future__ import annotations

import re

_COQ_BANNED = re.compile(
    r"\b(Admitted|admit|Abort|Axioms?|Parameters?|Hypothes[ie]s|Variables?|Conjecture|"
    r"Theorem|Lemma|Fact|Remark|Corollary|Proposition|Definition|Fixpoint|CoFixpoint|"
    r"Inductive|CoInductive|Example|Instance|Reset|Back|Module|Section|Require|Import|"
    r"Local|Global|Set|Unset|Extraction|Drop|Load|Context|Include|Declare|Program|Obligations?|"
    r"Notation|Infix|Redirect|Primitive|Register)\b"
)
_COQ_END = re.compile(r"\b(Qed|Defined)\s*\.")
_LEAN_BANNED = re.compile(r"\b(sorry|admit|axiom|theorem|lemma|def|instance|opaque)\b")
_ISABELLE_BANNED = re.compile(r"\b(sorry|oops|axiomatization|axioms|lemma|theorem|definition)\b")


def _strip_coq_comments(text: str) -> str:
    """``text`` with each comment replaced by a space and each string by ``""``.

    One pass, so linear in the length (the old repeated regex substitution
    was quadratic in the number of ``(*``). An unclosed comment or string
    runs to the end, as Coq would read it.
    """
    out: list[str] = []
    depth = 0  # comment nesting
    in_string = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if in_string:
            if c == '"':
                if text.startswith('""', i):  # an escaped quote
                    i += 2
                    continue
                in_string = False
                if depth == 0:
                    out.append('""')
        elif c == '"':
            in_string = True
        elif text.startswith("(*", i):
            depth += 1
            i += 2
            continue
        elif depth and text.startswith("*)", i):
            depth -= 1
            if depth == 0:
                out.append(" ")
            i += 2
            continue
        elif depth == 0:
            out.append(c)
        i += 1
    return "".join(out)


def refuse(prover: str, proof: str) -> str | None:
    """Why ``proof`` is refused without compiling it, or None."""
    if not proof.strip():
        return "the proof is empty"
    if prover == "coq":
        body = _strip_coq_comments(proof)
        m = _COQ_BANNED.search(body)
        if m:
            return f"'{m.group(1)}' is not allowed in a proof"
        ends = list(_COQ_END.finditer(body))
        if len(ends) != 1 or body[ends[0].end() :].strip():
            return "the proof must end with exactly one 'Qed.' (or 'Defined.') and nothing after it"
        return None
    banned = _LEAN_BANNED if prover == "lean" else _ISABELLE_BANNED
    m = banned.search(proof)
    return f"'{m.group(1)}' is not allowed in a proof" if m else None
