"""The simulator's expert for theorem proving: it knows each problem's reference proof.

A correct plan names the reference proof's tactics; a correct thought or
reflection proposes the reference proof; a correct action writes it, whatever
the thought said (writing the formal proof is the action module's skill,
which is why action dominates here, as in CapaBench's ATP results). Wrong
answers are the mistakes provers see all the time: the closing tactic too
weak (``auto`` for ``lia``, ``lia`` for a nonlinear goal), a step left out
(no ``intros``, no ``unfold``), a proof that stops early, or a shortcut the
environment refuses (``Admitted``). A wrong action follows a wrong thought.
Some problems trip even a correct prover-writer now and then
(:data:`TRAPS`, the same for every model): this environment's difficulty.
"""

from __future__ import annotations

import random
import re
import zlib

from agentbus import ExpertKit, ExpertQuery, Upstream, Verdict
from agentbus import prompt_sections as sections
from environments.atp.problem import ENV, Problem

_NEXT = re.compile(r"Next(?: proof)?:\s*`([^`\n]+)`", re.IGNORECASE)
_TACTIC = re.compile(r"\b(lia|nia|auto|intros?|unfold|split|pose proof|reflexivity|simpl|ring)\b")
#: per-problem chance that a correct proof-writer still slips, by problem id
TRAPS = (0.25, 0.4, 0.55)


def squash(text: str) -> str:
    return " ".join(text.split())


def trap(problem_id: str) -> float:
    return TRAPS[zlib.crc32(problem_id.encode()) % len(TRAPS)]


def wrong_proof(reference: str, rng: random.Random) -> str:
    """A plausible proof that the prover rejects (three kinds, so compiles repeat)."""
    kind = rng.randrange(3)
    body = reference.strip()
    if kind == 0:  # the closing decision procedure swapped for one too weak
        weak = re.sub(r"\b(lia|nia)\b", "trivial", body)
        return weak if weak != body else "Proof. intros. trivial. Qed."
    if kind == 1:  # stops before the goal is closed
        return re.sub(r"\S+\s*\.\s*(Qed|Defined)\.\s*$", "Qed.", body) or "Proof. Qed."
    return re.sub(r"\b(Qed|Defined)\.\s*$", "Admitted.", body)  # the shortcut, refused


class AtpExpert(ExpertKit[None]):
    """Plays theorem-proving problems from their reference proofs."""

    env = ENV

    def _good(self, problem: Problem, text: str) -> bool:
        found = _NEXT.findall(text)
        return bool(found) and squash(found[-1]) == squash(problem.reference)

    def assess(self, query: ExpertQuery) -> Upstream:
        if query.role not in ("reasoning", "action", "reflection"):
            return Upstream()
        problem = Problem.of(query.task)
        parts = sections(query.user)
        plan: bool | None = None
        if parts.get("Plan"):
            needed = set(_TACTIC.findall(problem.reference))
            plan = needed <= set(_TACTIC.findall(parts["Plan"])) and "Admitted" not in parts["Plan"]
        thought: bool | None = None
        reflection: bool | None = None
        if query.role == "action" and parts.get("Current thought"):
            thought = self._good(problem, parts["Current thought"])
        if query.role == "reasoning" and parts.get("Latest reflection"):
            reflection = self._good(problem, parts["Latest reflection"])
        return Upstream(plan=plan, thought=thought, reflection=reflection)

    def respond(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        problem = Problem.of(query.task)
        parts = sections(query.user)
        reference = squash(problem.reference)
        if query.role == "planning":
            if verdict.malformed:
                return "Plan: prove the theorem."
            tactics = _TACTIC.findall(problem.reference)
            if not verdict.correct:
                tactics = _TACTIC.findall(wrong_proof(problem.reference, rng)) or ["auto"]
            steps = "\n".join(f"{n}. `{t}`" for n, t in enumerate(dict.fromkeys(tactics), 1))
            return "Plan (tactics in order):\n" + steps
        if query.role == "action":
            proof = reference
            correct = verdict.correct and rng.random() >= trap(problem.id)
            if not correct:
                found = _NEXT.findall(parts.get("Current thought", ""))
                misled = found and squash(found[-1]) != reference
                proof = squash(found[-1]) if misled else wrong_proof(problem.reference, rng)
            if verdict.malformed:
                return rng.choice(
                    (f"The proof is {proof} and it should work.\nDone.", "```action\n```")
                )
            return f"```action\n{proof}\n```"
        proof = reference if verdict.correct else squash(wrong_proof(problem.reference, rng))
        if verdict.malformed:
            return "The goal looks arithmetic; some automation should do it."
        if query.role == "reflection":
            return f"The prover did not accept the last proof. Next: `{proof}`."
        return f"The goal is arithmetic once the variables are introduced. Next: `{proof}`."
