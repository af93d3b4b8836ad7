"""The theorem-proving environment: each step submits a proof, a real prover judges it.

``setup`` loads CapaBench's coq/lean/isabelle file (the prover follows from
its fields) or the built-in Coq generator, and refuses in one line when the
prover or bubblewrap cannot run here. A step fills the proof into the
problem's hole and checks it (:class:`~environments.atp.prover.Checker`,
shared by all episodes of a run for its cache); an accepted proof ends the
episode won, a rejected one shows the prover's message and open goals and
asks for a reflection. The episode fails when its attempts run out.
"""

from __future__ import annotations

from typing import ClassVar

from agentbus import (
    ActionProposed,
    Environment,
    EnvSetup,
    Feedback,
    Observation,
    Score,
    Task,
    TaskSource,
    UserError,
)
from environments.atp.generator import generate
from environments.atp.guide import atp_guide
from environments.atp.loader import load_problems
from environments.atp.problem import Problem
from environments.atp.prover import Checker, available
from environments.sandbox import unavailable
from environments.task_source import loaded_or_generated

#: proof attempts per problem
ATTEMPTS = 2


class AtpEnvironment(Environment):
    """Coq (and Lean 4 / Isabelle when installed) proofs checked in a sandbox."""

    name: ClassVar[str] = "atp"
    default_max_steps: ClassVar[int] = ATTEMPTS
    action_format = "proof"

    def __init__(self, checker: Checker | None = None) -> None:
        self.checker = checker or Checker()
        self.problem: Problem | None = None
        self.attempts = 0
        self.solved = False
        self.last = ""

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        problems = loaded_or_generated(source, "atp", load_problems, generate)
        for prover in sorted({p.prover for p in problems}):
            why = available(prover)
            if why is not None:
                raise UserError(f"--env atp: {why}")
        why = unavailable()
        if why is not None:
            raise UserError(f"--env atp: {why}")
        checker = Checker()
        return EnvSetup(tasks=[p.to_task() for p in problems], factory=lambda: cls(checker))

    def guide(self, task: Task) -> dict[str, str]:
        return atp_guide()

    async def reset(self, task: Task) -> Observation:
        self.problem = Problem.of(task)
        self.attempts, self.solved, self.last = 0, False, ""
        text = (
            f"Prover: {self.problem.prover}. Theorem to prove: {self.problem.theorem}. "
            f"You have {ATTEMPTS} attempts."
        )
        return Observation(text=text, data={"prover": self.problem.prover})

    async def step(self, action: ActionProposed) -> Feedback:
        if self.problem is None:
            raise RuntimeError("atp environment: step() before reset()")
        if self.solved:
            return Feedback(text="The theorem is already proved.", done=True, success=True)
        self.attempts += 1
        result = await self.checker.check(self.problem, action.text)
        self.solved = result.accepted
        self.last = result.message
        out_of_attempts = not self.solved and self.attempts >= ATTEMPTS
        done = self.solved or out_of_attempts
        return Feedback(
            text=result.message,
            done=done,
            success=self.solved if done else None,
            reward=1.0 if self.solved else 0.0,
            valid=True,
            needs_reflection=not self.solved and not done,
            data={"accepted": result.accepted, "attempts": self.attempts},
        )

    async def score(self) -> Score:
        return Score(
            reward=1.0 if self.solved else 0.0,
            success=self.solved,
            details={
                "problem": self.problem.id if self.problem else None,
                "prover": self.problem.prover if self.problem else None,
                "attempts": self.attempts,
                "last_message": self.last[:300],
            },
        )
