"""Checking a filled-in file with a real prover, in throw-away sandboxes.

``check(problem, proof) -> Result``. The word guard (:mod:`guard`) refuses
obvious cheats early, as feedback; what decides is :mod:`coq`: compile the
file, then check the compiled theorem in a second sandbox with a file the
agent never saw (the exact original statement, no axioms, no unsafe flags,
then ``coqchk``). A proof Coq rejects as unfinished is compiled once more
with ``Show.`` in place of ``Qed.`` to report the remaining goals.

Lean 4 and Isabelle are refused: neither prover is installed where this was
built, so no axiom/``sorry`` check for them could be tested, and an untested
check is a verdict a model could forge.

Compiles are deterministic, so results are cached by file text, and equal
files in flight are compiled once (many coalitions send the same proof); a
semaphore keeps a few sandboxes at a time, so hundreds of episodes queue
instead of starting hundreds of provers on two cores.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from environments.atp import coq
from environments.atp.guard import refuse
from environments.atp.problem import Problem
from environments.sandbox import SandboxLimits

#: prover commands looked up on PATH
COMMANDS = {"coq": "coqc", "lean": "lean", "isabelle": "isabelle"}
#: wall-clock seconds one compile may take
TIMEOUT_S = 60.0
#: characters of prover output kept for the feedback
FEEDBACK_CHARS = 1500
_ADMITTED_QED = re.compile(r"\b(Qed|Defined)\s*\.\s*$")
_T = TypeVar("_T")


@dataclass(frozen=True)
class Result:
    accepted: bool
    message: str


def available(prover: str) -> str | None:
    """None when ``prover`` can run here, else one line saying why not."""
    command = COMMANDS.get(prover)
    if command is None:
        return f"unknown prover {prover!r} (known: {', '.join(COMMANDS)})"
    if prover != "coq":
        return (
            f"{prover} proofs are refused: agentbus has no tested check that a {prover} proof "
            "uses no sorry/axiom (the prover is not installed where it was built), and an "
            "untested check is a verdict a model could forge; use Coq problems"
        )
    if shutil.which(command) is None or shutil.which("coqchk") is None:
        return (
            "the coq prover is unavailable: 'coqc' or 'coqchk' is not on PATH "
            "(install the Debian package 'coq')"
        )
    return None


def _extra_binds() -> list[tuple[str, str]]:
    """Host files a prover needs inside the sandbox (Coq's plugins are found through findlib)."""
    binds = []
    for path in ("/etc/ocamlfind.conf",):
        if Path(path).exists():
            binds.append((path, path))
    return binds


class Checker:
    """Checks proofs for one run: shared by every episode through the factory.

    ``guard=False`` skips the early word guard, so tests can show that the
    verdict alone rejects every cheat.
    """

    def __init__(self, parallel: int = 4, guard: bool = True) -> None:
        self.parallel = parallel
        self.guard = guard
        self.limits = SandboxLimits(timeout_s=TIMEOUT_S, cpu_s=int(TIMEOUT_S), memory_mb=2048)
        self._done: dict[str, Result] = {}
        self._flight: dict[str, asyncio.Future[Result]] = {}
        self._gate: asyncio.Semaphore | None = None
        self.compiles = 0
        #: per problem, the axioms its own file brings (what its reference proof rests on)
        self._allowed: dict[str, asyncio.Task[frozenset[str]]] = {}

    async def check(self, problem: Problem, proof: str) -> Result:
        why = available(problem.prover)
        if why is not None:
            return Result(False, f"Refused: {why}.")
        why = refuse(problem.prover, proof) if self.guard else None
        if why is not None:
            return Result(False, f"Refused: {why}.")
        key = f"{problem.prover}\0{problem.theorem}\0{problem.fill(proof)}"
        if key in self._done:
            return self._done[key]
        if key in self._flight:
            return await asyncio.shield(self._flight[key])
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._flight[key] = future
        try:
            result = await self._coq(problem, proof)
            self._done[key] = result
            future.set_result(result)
            return result
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it, nobody else logs it
            raise
        finally:
            del self._flight[key]

    async def _gated(self, step: Awaitable[_T]) -> _T:
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.parallel)
        async with self._gate:
            self.compiles += 1
            return await step

    async def _compile(self, problem: Problem, proof: str) -> tuple[coq.Compiled | None, str]:
        tag = coq.new_tag()
        text = coq.with_reference(problem, proof, tag)
        if text is None:
            return None, tag
        return await self._gated(coq.compile_file(text, self.limits, _extra_binds())), tag

    async def _coq(self, problem: Problem, proof: str) -> Result:
        compiled, tag = await self._compile(problem, proof)
        if compiled is None:
            return Result(
                False, f"The statement of {problem.theorem!r} is not found before the hole."
            )
        if compiled.timed_out:
            return Result(False, "Coq did not finish within the time limit.")
        if compiled.flooded:
            return Result(
                False,
                f"Coq's output passed {coq.OUTPUT_CAP} bytes, so the compile was stopped:\n"
                + _cut(compiled.output, tag),
            )
        if not compiled.ok or compiled.vo is None:
            message = "Coq rejected the proof:\n" + _cut(compiled.output, tag)
            if "incomplete proof" in compiled.output or "Attempt to save" in compiled.output:
                goals = await self._goals(problem, proof)
                if goals:
                    message += "\nRemaining goals:\n" + goals
            return Result(False, message)
        verdict = await self._gated(
            coq.verify(compiled.vo, problem.theorem, tag, self.limits, _extra_binds())
        )
        if not verdict.accepted and verdict.reason in ("assumptions", "kernel"):
            allowed = await self._file_axioms(problem)
            if verdict.found and verdict.found <= allowed:
                verdict = await self._gated(
                    coq.verify(
                        compiled.vo, problem.theorem, tag, self.limits, _extra_binds(), allowed
                    )
                )
        if verdict.accepted and verdict.found:
            names = sorted({a.split("|", 1)[1] for a in verdict.found})
            return Result(
                True,
                "Coq accepted the proof (it rests only on axioms the problem's own file "
                f"brings, as its reference proof does: {', '.join(names)}).",
            )
        if verdict.accepted:
            return Result(True, "Coq accepted the proof (no axioms used).")
        detail = _cut(verdict.detail, tag)
        if verdict.reason == "assumptions":
            return Result(False, f"The proof depends on axioms:\n{detail}")
        if verdict.reason == "kernel":
            return Result(False, f"coqchk rejected the compiled proof:\n{detail}")
        return Result(
            False,
            f"The file compiles, but it does not prove {problem.theorem!r} with its original "
            f"statement:\n{detail}",
        )

    async def _file_axioms(self, problem: Problem) -> frozenset[str]:
        """The axioms the problem's reference proof rests on (once per problem and run).

        CapaBench's files import classical logic or state helper lemmas with
        ``Admitted`` for the proof to use: those are the problem's given context,
        not the agent's doing. A new axiom, an admitted theorem or an unsafe flag
        of the agent's is never in this set, so it is still refused.
        """
        key = f"{problem.prover}\0{problem.theorem}\0{problem.source}"
        if key not in self._allowed:
            self._allowed[key] = asyncio.ensure_future(self._reference_axioms(problem))
        return await asyncio.shield(self._allowed[key])

    async def _reference_axioms(self, problem: Problem) -> frozenset[str]:
        compiled, tag = await self._compile(problem, problem.reference)
        if compiled is None or not compiled.ok or compiled.vo is None:
            return frozenset()
        verdict = await self._gated(
            coq.verify(compiled.vo, problem.theorem, tag, self.limits, _extra_binds())
        )
        return verdict.found if verdict.reason in ("", "assumptions", "kernel") else frozenset()

    async def _goals(self, problem: Problem, proof: str) -> str:
        """The goals left open where the proof says ``Qed.`` (Coq prints them for ``Show.``)."""
        opened = _ADMITTED_QED.sub("Show. Abort.", proof.rstrip())
        if opened == proof.rstrip():
            return ""
        compiled, tag = await self._compile(problem, opened)
        return _cut(compiled.output, tag) if compiled is not None and compiled.ok else ""


def _cut(text: str, tag: str = "") -> str:
    text = text.strip()
    if tag:
        text = text.replace(f"__ab_ref_{tag}", "__ab_ref")
    return text if len(text) <= FEEDBACK_CHARS else text[:FEEDBACK_CHARS] + "\n[truncated]"
