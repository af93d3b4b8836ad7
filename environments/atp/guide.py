"""The theorem-proving specialisation of the four PRAF prompts."""

from __future__ import annotations

from agentbus import env_guide


def atp_guide() -> dict[str, str]:
    return env_guide(
        system="""\
Domain: formal theorem proving. The task shows a source file of a proof assistant
(Coq unless it says Lean or Isabelle) with a hole where the proof goes. A step
submits a complete proof for the hole; the prover checks the whole file and answers
with its verdict, its error message and the goals still open. Cheating is refused:
no Admitted/admit/sorry, no new axioms, parameters or hypotheses, no new
definitions or theorems, and the theorem must rest on no axiom.""",
        planning="""\
Say how the theorem will be proved: the tactics in order (e.g. introduce the
variables, unfold the definitions, finish with an arithmetic decision procedure
such as `lia` or `nia`), each tactic in backticks.""",
        reasoning="""\
Read the statement and the prover's last answer, then write the complete proof to
try next on one line in backticks, e.g. "Next: `Proof. intros. lia. Qed.`", and say
briefly why it will close the goal.""",
        action="""\
Action syntax: exactly one fence holding the whole proof for the hole and nothing
else: for Coq from `Proof.` to `Qed.`; for Lean the tactic block after `by`; for
Isabelle the proof text up to the theory's closing `end`. For example:
```action
Proof. intros. lia. Qed.
```""",
        reflection="""\
The prover rejected the last proof. From its error message and the remaining goals,
say in one or two sentences what was missing (a variable not introduced, a
definition not unfolded, a goal nonlinear for lia, ...) and give the corrected
proof on one line in backticks.""",
    )
