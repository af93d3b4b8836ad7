"""Red-team tests of the Coq grader: a false theorem is never scored solved.

Every attack is sent for ``1 = 2`` (false in ``Z``) through the real coqc in
the real sandbox, once with the word guard (the environment's path) and once
without it, so the verdict step alone is shown to reject each cheat. Attacks
marked ``compiles`` are files coqc accepts: for them the rejection must come
from the separate check (the message says so), not from a compile error.
"""

from __future__ import annotations

import anyio
import pytest

from environments.atp import coq
from environments.atp.generator import MARKER
from environments.atp.problem import Problem
from environments.atp.prover import Checker, _extra_binds, available
from environments.sandbox import unavailable

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        available("coq") is not None or unavailable() is not None,
        reason=str(available("coq") or unavailable()),
    ),
]

HEADER = "Require Import Coq.ZArith.ZArith.\n Local Open Scope Z.\n"
FALSE = Problem("false", "coq", f"{HEADER} Fact false_thm: 1 = 2.{MARKER}", "false_thm", "")
ISSUE_CHEAT = (
    "Proof. Context (cheat : forall P : Prop, P). "
    'idtac "Closed under the global context". apply cheat. Qed.'
)
RESTATE = "Fact false_thm : 1 = 2."

#: name -> (proof, whether coqc accepts the file)
ATTACKS: dict[str, tuple[str, bool]] = {
    "issue: Context cheat printing the verdict": (ISSUE_CHEAT, True),
    "issue: string hides a comment from the guard": (
        'Proof. idtac "(*". Admitted. Goal True. idtac "*)". exact I. Qed.',
        True,
    ),
    "forged markers after Admitted": (
        'Proof. idtac "Closed under the global context". Admitted. '
        'Goal True. idtac "Closed under the global context". exact I. Qed.',
        True,
    ),
    "statement swap after Abort": ("Proof. Abort. Fact false_thm : 1 = 1. reflexivity. Qed.", True),
    "weaker statement under the same name": (
        "Proof. Abort. Fact false_thm : 1 = 2 -> 1 = 2. auto. Qed.",
        True,
    ),
    "Axiom with the theorem's name": ("Proof. Abort. Axiom false_thm : 1 = 2.", True),
    "Parameter with the theorem's name": ("Proof. Abort. Parameter false_thm : 1 = 2.", True),
    "Hypothesis outside a section": (
        f"Proof. Abort. Hypothesis h : 1 = 2. {RESTATE} exact h. Qed.",
        True,
    ),
    "Variable outside a section": (
        f"Proof. Abort. Variable h : 1 = 2. {RESTATE} exact h. Qed.",
        True,
    ),
    "Section with a Variable": (
        f"Proof. Abort. Section S. Variable h : 1 = 2. {RESTATE} exact h. Qed. End S.",
        True,
    ),
    "Context inside the proof": ("Proof. Context (h : 1 = 2). exact h. Qed.", True),
    "Admitted": ("Proof. Admitted.", True),
    "admit then Admitted": ("Proof. admit. Admitted.", True),
    "admit then Qed": ("Proof. admit. Qed.", False),
    "Unset Guard Checking": (
        "Proof. Abort. Unset Guard Checking. Fixpoint f (n : nat) : 1 = 2 := f n. "
        f"Set Guard Checking. {RESTATE} exact (f 0). Qed.",
        True,
    ),
    "Global Unset Guard Checking (carries into Require)": (
        "Proof. Abort. Global Unset Guard Checking. Fixpoint f (n : nat) : 1 = 2 := f n. "
        f"{RESTATE} exact (f 0). Qed.",
        True,
    ),
    "Unset Guard Checking inside the proof": (
        "Proof. Unset Guard Checking. exact ((fix f (n : nat) : 1 = 2 := f n) 0%nat). Qed.",
        True,
    ),
    "#[bypass_check(guard)]": (
        "Proof. Abort. #[bypass_check(guard)] Fixpoint f (n : nat) : 1 = 2 := f n. "
        f"{RESTATE} exact (f 0). Qed.",
        True,
    ),
    "Unset Positivity Checking": (
        "Proof. Abort. Unset Positivity Checking. "
        "Inductive Bad := mk : (Bad -> False) -> Bad. Set Positivity Checking. "
        "Definition nb (b : Bad) : False := match b with mk h => h b end. "
        f"{RESTATE} exfalso. exact (nb (mk nb)). Qed.",
        True,
    ),
    "#[bypass_check(positivity)]": (
        "Proof. Abort. #[bypass_check(positivity)] "
        "Inductive Bad := mk : (Bad -> False) -> Bad. "
        "Definition nb (b : Bad) : False := match b with mk h => h b end. "
        f"{RESTATE} exfalso. exact (nb (mk nb)). Qed.",
        True,
    ),
    "Unset Universe Checking (Hurkens' paradox)": (
        "Proof. Abort. Require Import Coq.Logic.Hurkens. Unset Universe Checking. "
        "Definition bad : False := TypeNeqSmallType.paradox Type eq_refl. "
        f"Set Universe Checking. {RESTATE} destruct bad. Qed.",
        True,
    ),
    "#[bypass_check(universes)]": (
        "Proof. Abort. Require Import Coq.Logic.Hurkens. #[bypass_check(universes)] "
        "Definition bad : False := TypeNeqSmallType.paradox Type eq_refl. "
        f"{RESTATE} destruct bad. Qed.",
        True,
    ),
    "numeral notation: 2 means 1": (
        'Proof. Abort. Definition two := 1. Notation "2" := two : Z_scope. '
        f"{RESTATE} reflexivity. Qed.",
        True,
    ),
    "= redefined as <=": (
        'Proof. Abort. Notation "x = y" := (Z.le x y) : type_scope. '
        f"{RESTATE} unfold Z.le. discriminate. Qed.",
        True,
    ),
    "Module Type + Declare Module + Include": (
        "Proof. Abort. Module Type T. Parameter false_thm : 1 = 2. End T. "
        "Declare Module M : T. Include M.",
        True,
    ),
    "Module with a restated theorem + Include": (
        "Proof. Abort. Module M. Fact false_thm : 1 = 1. reflexivity. Qed. End M. Include M.",
        True,
    ),
    "functor applied to a declared module": (
        "Proof. Abort. Module Type T. Parameter p : 1 = 2. End T. Declare Module M : T. "
        "Module F (X : T). Definition false_thm : 1 = 2 := X.p. End F. Module N := F M. "
        "Include N.",
        True,
    ),
    "Reset Initial and a new file": (
        "Proof. Abort. Reset Initial. Require Import Coq.ZArith.ZArith. "
        "Local Open Scope Z. Fact false_thm : 1 = 1. reflexivity. Qed.",
        True,
    ),
    "Program Definition with an open obligation": (
        "Proof. Abort. Require Import Program. Program Definition false_thm : 1 = 2 := _.",
        False,
    ),
    "Obligation admitted": (
        "Proof. Abort. Require Import Program. Program Definition false_thm : 1 = 2 := _. "
        "Next Obligation. Admitted.",
        True,
    ),
    "Declare ML Module of a missing plugin": (
        'Proof. Abort. Declare ML Module "evil_plugin". Axiom false_thm : 1 = 2.',
        False,
    ),
    "Redirect over the check's files": (
        'Proof. Redirect "/tmp/log" Print nat. Redirect "/tmp/w/Check" Print nat. '
        "Context (h : 1 = 2). exact h. Qed.",
        True,
    ),
    "Extraction over the compiled file": (
        'Proof. Abort. Require Extraction. Extraction "/tmp/w/Proof" nat. '
        'Cd "/tmp". Axiom false_thm : 1 = 2.',
        True,
    ),
    "Load of a file the proof wrote": (
        'Proof. Abort. Redirect "/tmp/w/evil" Print nat. Load "/tmp/w/evil.out". '
        "Axiom false_thm : 1 = 2.",
        False,
    ),
    "Require of a module the agent could name": (
        "Proof. Abort. Require AbSub.Check. Axiom false_thm : 1 = 2.",
        False,
    ),
    "Drop": ("Proof. Drop. Qed.", False),
    "Time and Fail wrappers around Admitted": (
        "Proof. Fail Qed. Time Fail Fail Admitted. Time Admitted.",
        True,
    ),
    "Global printing options": (
        "Proof. Abort. Global Set Printing All. Global Unset Printing Notations. "
        "Axiom false_thm : 1 = 2.",
        True,
    ),
}


async def _verdicts(checker: Checker) -> dict[str, str]:
    """name -> the checker's message, for every attack (all at once, through its gate)."""
    out: dict[str, str] = {}

    async def one(name: str, proof: str) -> None:
        result = await checker.check(FALSE, proof)
        out[name] = ("ACCEPTED " if result.accepted else "") + result.message

    async with anyio.create_task_group() as tg:
        for name, (proof, _) in ATTACKS.items():
            tg.start_soon(one, name, proof)
    return out


async def test_every_attack_fails_on_the_verdict_alone() -> None:
    verdicts = await _verdicts(Checker(parallel=4, guard=False))
    accepted = [name for name, msg in verdicts.items() if msg.startswith("ACCEPTED")]
    assert not accepted, accepted
    # the attacks that coqc accepts are rejected by the separate check, not by a compile error
    wrong_stage = [
        f"{name}: {verdicts[name][:300]}"
        for name, (_, compiles) in ATTACKS.items()
        if compiles == verdicts[name].startswith("Coq rejected the proof")
    ]
    assert not wrong_stage, "\n".join(wrong_stage)
    assert "Proof.cheat" in verdicts["issue: Context cheat printing the verdict"]
    assert "does not prove 'false_thm'" in verdicts["statement swap after Abort"]
    assert "assumed to be guarded" in verdicts["Global Unset Guard Checking (carries into Require)"]


async def test_every_attack_fails_through_the_guard_too() -> None:
    verdicts = await _verdicts(Checker(parallel=4))
    assert not [name for name, msg in verdicts.items() if msg.startswith("ACCEPTED")]
    assert "'Admitted' is not allowed" in verdicts["issue: string hides a comment from the guard"]


async def test_the_reference_copy_counts_as_an_axiom() -> None:
    """Even a proof that knew the reference's secret name could not use it."""
    tag = coq.new_tag()
    text = coq.with_reference(FALSE, f"Proof. exact __ab_ref_{tag}. Qed.", tag)
    assert text is not None
    limits = Checker().limits
    compiled = await coq.compile_file(text, limits, _extra_binds())
    assert compiled.ok and compiled.vo is not None
    verdict = await coq.verify(compiled.vo, "false_thm", tag, limits, _extra_binds())
    assert not verdict.accepted and verdict.reason == "assumptions"
    assert f"__ab_ref_{tag}" in verdict.detail


async def test_honest_proofs_pass_with_the_same_pipeline() -> None:
    """The control: a true statement, and one about an inductive type of the problem's own.

    (The copy is declared in the same file, so the problem's inductive types and
    definitions are the same constants on both sides; CapaBench's and the generated
    reference proofs are in ``test_atp_coq.py``.)
    """
    true = Problem("true", "coq", f"{HEADER} Fact true_thm: 1 + 1 = 2.{MARKER}", "true_thm", "")
    inductive = Problem(
        "inductive",
        "coq",
        " Inductive color := Red | Blue.\n"
        " Definition flip c := match c with Red => Blue | Blue => Red end.\n"
        f" Lemma flip_twice: forall c, flip (flip c) = c.{MARKER}",
        "flip_twice",
        "",
    )
    checker = Checker(parallel=4, guard=False)
    proofs = [
        (true, "Proof. reflexivity. Qed."),
        (inductive, "Proof. intros c. destruct c; reflexivity. Qed."),
    ]
    results: list[str] = []

    async def one(problem: Problem, proof: str) -> None:
        result = await checker.check(problem, proof)
        results.append("" if result.accepted else result.message)

    async with anyio.create_task_group() as tg:
        for problem, proof in proofs:
            tg.start_soon(one, problem, proof)
    assert results == ["", ""], results
