"""The ATP environment against the real coqc, in the sandbox.

CapaBench's first 20 Coq problems are accepted with their reference proofs;
``Admitted``, an added axiom and a redefinition are refused; an axiom that
slips into the file is caught by the separate check; failures report the
remaining goals; Lean and Isabelle are refused in one line (exit status 2).
The red-team attacks are in ``test_atp_redteam.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agentbus import TaskSource, UserError
from environments.atp.env import AtpEnvironment
from environments.atp.generator import generate
from environments.atp.loader import load_problems
from environments.atp.problem import Problem
from environments.atp.prover import Checker, available
from environments.sandbox import unavailable

ATP = Path(__file__).resolve().parents[2] / "shared" / "capabench" / "atp"
needs_coq = pytest.mark.skipif(
    available("coq") is not None or unavailable() is not None,
    reason=str(available("coq") or unavailable()),
)
needs_shared = pytest.mark.skipif(not ATP.is_dir(), reason=f"no shared data at {ATP}")


async def _check_all(checker: Checker, problems: list[Problem]) -> list[bool]:
    accepted: dict[str, bool] = {}

    async def one(p: Problem) -> None:
        accepted[p.id] = (await checker.check(p, p.reference)).accepted

    async with anyio.create_task_group() as tg:
        for p in problems:
            tg.start_soon(one, p)
    return [accepted[p.id] for p in problems]


@needs_coq
@needs_shared
async def test_first_20_capabench_reference_proofs_are_accepted() -> None:
    problems = load_problems(ATP / "coq.json")[:20]
    assert all(await _check_all(Checker(parallel=4), problems))


@needs_coq
async def test_generated_reference_proofs_are_accepted() -> None:
    assert all(await _check_all(Checker(parallel=4), generate(10, seed=1)))


@needs_coq
async def test_cheats_are_refused_and_failures_show_goals() -> None:
    problem = generate(1)[0]
    checker = Checker()
    admitted = await checker.check(problem, "Proof. intros. Admitted.")
    assert not admitted.accepted and "Admitted" in admitted.message
    axiom = await checker.check(problem, "Proof. lia. Qed.\nAxiom cheat : False.")
    assert not axiom.accepted and "Axiom" in axiom.message
    redefined = await checker.check(
        problem, f"Abort.\nTheorem {problem.theorem} : True. Proof. exact I. Qed."
    )
    assert not redefined.accepted
    short = await checker.check(problem, "Proof. intros. Qed.")
    assert not short.accepted and "Remaining goals" in short.message


@needs_coq
async def test_an_axiom_in_the_file_is_caught_by_print_assumptions() -> None:
    base = generate(1)[0]
    source = base.source.replace(" Fact ", " Axiom everything : forall P : Prop, P.\n Fact ", 1)
    problem = Problem(base.id, "coq", source, base.theorem, "Proof. apply everything. Qed.")
    result = await Checker().check(problem, problem.reference)
    assert not result.accepted and "axioms" in result.message


@needs_shared
def test_lean_and_isabelle_load_but_are_refused_in_one_line() -> None:
    """No sorry/axiom check for them could be tested here, so they are refused even when on PATH."""
    lean = load_problems(ATP / "lean.json")
    isabelle = load_problems(ATP / "isabelle.json")
    assert len(lean) == len(isabelle) == 111
    assert lean[0].fill(lean[0].reference).rstrip().endswith("linarith")
    filled = isabelle[0].fill(isabelle[0].reference)
    assert "Fill Your Proof Here" not in filled and filled.rstrip().endswith("end")
    for path in ("lean.json", "isabelle.json"):
        with pytest.raises(UserError) as exc:
            AtpEnvironment.setup(TaskSource(dataset=ATP / path))
        assert "\n" not in str(exc.value) and "proofs are refused" in str(exc.value)
    proc = subprocess.run(
        [sys.executable, "-m", "agentbus.run", "--env", "atp", "--dataset", str(ATP / "lean.json")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert len(proc.stderr.strip().splitlines()) == 1 and "lean proofs are refused" in proc.stderr


@needs_shared
def test_coq_file_loads_with_markers_and_ids() -> None:
    problems = load_problems(ATP / "coq.json")
    assert len(problems) == 111 and problems[0].theorem == "chickens_and_rabbits"
    filled = problems[0].fill(problems[0].reference)
    assert "Fill in your proof here" not in filled and "lia" in filled


def test_generator_is_prefix_stable() -> None:
    assert generate(3, seed=4) == generate(9, seed=4)[:3]
