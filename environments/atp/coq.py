"""Coq's verdict, from a channel the proof cannot write to.

Step 1 compiles the agent's file in a fresh sandbox. Everything the proof
prints goes to a file inside that sandbox through ``head -c``, so a flood
of output ends the compile at ``OUTPUT_CAP`` bytes (coqc dies of SIGPIPE)
and agentbus only ever receives the first and last few KiB of it. The
compiled ``.vo`` comes back as a file, never through the printed output.

Step 2 runs in another fresh sandbox with a file the agent never saw: it
``Require``s the compiled module (loading a ``.vo`` runs none of its
commands: nothing the proof printed at compile time is printed again),
switches guard, positivity and universe checking back on (a
``Global Unset`` in the proof would otherwise carry over), checks that the
constant at the theorem's full path has the type of a reference copy of
the statement (up to conversion, which is what proving it means), and
prints its assumptions. The verdict is that
process's whole output being ``Closed under the global context``; when it
is, ``coqchk`` re-checks the compiled module in Coq's independent kernel
checker and must list nothing of the submission as an axiom or unsafe.

The reference copy is the original statement under a fresh random name
(same keyword, ``__ab_ref_<hex>``, closed by ``Admitted.``), placed right
before the theorem on its line,
so it is elaborated in the problem's own context (its inductive types,
definitions, scopes and notations), before any line the agent wrote. A
proof that aborts the theorem and states another one, wraps it in a
``Section`` with hypotheses, redefines notations, or resets the file
cannot make the theorem's type match the reference (undoing the reference
removes it, and its name is not known to the proof); using the reference
itself shows up as an axiom.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from environments.atp.bounded import Bounded, run_bounded
from environments.atp.problem import COQ_MARKER, Problem
from environments.sandbox import SandboxLimits

#: bytes of coqc output after which the compile is stopped
OUTPUT_CAP = 1 << 20
#: bytes of the output kept from each end for the feedback
KEEP = 8192
#: what the check step's whole output must be
CLOSED = "Closed under the global context"
#: logical root and module of the submission (``-Q . AbSub``)
ROOT, MODULE = "AbSub", "Proof"
_IDENT = re.compile(r"[^\W\d][\w']*")
_KEYWORDS = r"Theorem|Lemma|Fact|Remark|Corollary|Proposition|Property|Example|Definition"

# /tmp/o (what goes back) is made only after coqc has exited: nothing the proof
# writes while it compiles (Redirect, Extraction) can end up in the answer
_COMPILE = f"""
mkdir -p /tmp/w && tar -xf - -C /tmp/w && cd /tmp/w || exit 3
coqc -q -Q . {ROOT} -o /tmp/w/{MODULE}.vo {MODULE}.v </dev/null 2>&1 \\
  | head -c {OUTPUT_CAP} > /tmp/log
rc="${{PIPESTATUS[0]}}"
rm -rf /tmp/o && mkdir /tmp/o && cd /tmp/o || exit 3
echo "$rc" > rc
wc -c < /tmp/log > size
if [ "$(cat size)" -le {2 * KEEP} ]; then cp /tmp/log all
else head -c {KEEP} /tmp/log > head; tail -c {KEEP} /tmp/log > tail; fi
if [ "$rc" = 0 ] && [ -f /tmp/w/{MODULE}.vo ]; then cp /tmp/w/{MODULE}.vo .; fi
tar -cf - .
"""

_VERIFY = f"""
mkdir -p /tmp/w /tmp/o && tar -xf - -C /tmp/w && cd /tmp/w || exit 3
coqc -q -Q sub {ROOT} Check.v </dev/null 2>&1 | head -c 65536 > /tmp/o/check
echo "${{PIPESTATUS[0]}}" > /tmp/o/check.rc
if [ "$(cat /tmp/o/check.rc)" = 0 ]; then
  coqchk -silent -o -Q sub {ROOT} -norec {ROOT}.{MODULE} </dev/null 2>&1 \\
    | head -c 262144 > /tmp/o/coqchk
  echo "${{PIPESTATUS[0]}}" > /tmp/o/coqchk.rc
fi
cd /tmp/o && tar -cf - .
"""


@dataclass(frozen=True)
class Compiled:
    """Step 1's outcome: coqc's status, a cut of its output, the ``.vo`` when it succeeded."""

    ok: bool
    output: str
    vo: bytes | None
    flooded: bool = False
    timed_out: bool = False


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    #: ``statement`` (the theorem is missing or proves something else),
    #: ``assumptions`` (axioms, admitted parts or unsafe flags), ``kernel`` (coqchk), or ""
    reason: str
    detail: str
    #: every axiom found, as ``section|name`` from Print Assumptions and ``coqchk|name``
    found: frozenset[str] = frozenset()


def assumptions(text: str) -> frozenset[str]:
    """``section|name`` for each entry Print Assumptions lists (empty when closed).

    An output that lists nothing readable yields ``?|<text>``, so it can never
    match an allowed set by accident.
    """
    if text.strip() == CLOSED:
        return frozenset()
    section, found = "", set()
    for line in text.splitlines():
        if not line.strip() or line[:1].isspace():
            continue  # a blank line, or a type continued from the line above
        if line.rstrip().endswith(":") and " : " not in line:
            section = line.strip()
            continue
        found.add(f"{section}|{line.split(' : ', 1)[0].strip()}")
    return frozenset(found) or frozenset({f"?|{text.strip()}"})


def with_reference(problem: Problem, proof: str, tag: str) -> str | None:
    """The file to compile: the problem with a reference copy of the statement and the proof.

    None when the statement of ``problem.theorem`` cannot be found before the hole.
    """
    source = problem.source
    hole = COQ_MARKER.search(source)
    if hole is None or not _IDENT.fullmatch(problem.theorem):
        return None
    head = source[: hole.start()]
    pattern = rf"\b({_KEYWORDS})\s+{re.escape(problem.theorem)}(?![\w'])"
    found = list(re.finditer(pattern, head))
    if not found:
        return None
    m = found[-1]
    # on the theorem's own line, so the agent's line numbers are those of the file it saw
    copy = f"{m.group(1)} __ab_ref_{tag}{head[m.end() :].rstrip()} Admitted. ".replace("\n", " ")
    return f"{head[: m.start()]}{copy}{head[m.start() :]}{proof}\n{source[hole.end() :]}\n"


def check_file(theorem: str, tag: str) -> str:
    """The step-2 file: nothing in it comes from the agent."""
    sub = f"{ROOT}.{MODULE}"
    return (
        f"Require {sub}.\n"
        "Set Guard Checking.\nSet Positivity Checking.\nSet Universe Checking.\n"
        f"Definition __ab_check : ltac:(let t := type of @{sub}.__ab_ref_{tag} in exact t) "
        f":= @{sub}.{theorem}.\n"
        "Print Assumptions __ab_check.\n"
    )


def new_tag() -> str:
    return secrets.token_hex(16)


def _output(run: Bounded) -> str:
    if "all" in run.files:
        return run.text("all")
    size = run.text("size").strip() or "?"
    return f"{run.text('head')}\n[... {size} bytes in all, middle left out ...]\n{run.text('tail')}"


async def compile_file(
    text: str, limits: SandboxLimits, extra_ro: list[tuple[str, str]]
) -> Compiled:
    """Step 1: coqc on ``text`` as module ``AbSub.Proof`` (messages name ``./Proof.v``)."""
    run = await run_bounded(
        _COMPILE,
        {f"{MODULE}.v": text.encode()},
        limits,
        max_bytes=limits.file_mb * 1024 * 1024 + 4 * KEEP + 65536,
        extra_ro=extra_ro,
    )
    if run.timed_out:
        return Compiled(False, "", None, timed_out=True)
    if run.overflow or run.exit_code != 0:
        return Compiled(False, f"the compile sandbox failed (exit status {run.exit_code})", None)
    size = int(run.text("size").strip() or 0)
    rc = run.text("rc").strip()
    flooded = size >= OUTPUT_CAP
    vo = run.files.get(f"{MODULE}.vo")
    ok = rc == "0" and vo is not None and not flooded
    return Compiled(ok, _output(run), vo if ok else None, flooded=flooded)


async def verify(
    vo: bytes,
    theorem: str,
    tag: str,
    limits: SandboxLimits,
    extra_ro: list[tuple[str, str]],
    allowed: frozenset[str] = frozenset(),
) -> Verdict:
    """Step 2: the statement and assumptions check, then coqchk, in a fresh sandbox.

    ``allowed``: axioms the problem's own file brings (what its reference proof
    rests on: classical logic it imports, lemmas it states with ``Admitted``);
    any other axiom, or any at all when it is empty, is refused.
    """
    files = {f"sub/{MODULE}.vo": vo, "Check.v": check_file(theorem, tag).encode()}
    run = await run_bounded(_VERIFY, files, limits, max_bytes=1 << 20, extra_ro=extra_ro)
    if run.timed_out or run.overflow or run.exit_code != 0:
        why = "timed out" if run.timed_out else f"failed (exit status {run.exit_code})"
        return Verdict(False, "statement", f"the check step {why}")
    out = run.text("check")
    if run.text("check.rc").strip() != "0":
        return Verdict(False, "statement", out.strip())
    kernel = run.text("coqchk")
    reference = f"{ROOT}.{MODULE}.__ab_ref_{tag}"  # the one axiom the check itself declared
    flagged = [
        line.strip()
        for line in kernel.splitlines()
        if line.strip().startswith(f"{ROOT}.") and line.strip() != reference
    ]
    listed = assumptions(out)
    found = listed | {f"coqchk|{name}" for name in flagged}
    if listed - allowed:
        return Verdict(False, "assumptions", out.strip(), found)
    if (
        run.text("coqchk.rc").strip() != "0"
        or {f"coqchk|{name}" for name in flagged} - allowed
        or len(kernel) >= 262144
    ):
        return Verdict(False, "kernel", "\n".join(flagged) or kernel[-KEEP:].strip(), found)
    return Verdict(True, "", CLOSED if not found else out.strip(), found)
