"""Bounded resources of the Coq grader, and the guard's linear comment stripping.

A proof that prints 2,000,000 lines is stopped inside its sandbox once its
output passes ``OUTPUT_CAP`` and agentbus's own memory does not grow with it
(measured as the peak RSS of a child process that runs the check, against
the same child checking an honest proof); an honest proof with long output
still passes, because the verdict comes from the separate check step.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from environments.atp.generator import linear_system, make
from environments.atp.guard import _strip_coq_comments, refuse
from environments.atp.prover import Checker, available
from environments.sandbox import unavailable

ROOT = Path(__file__).resolve().parents[3]
needs_coq = pytest.mark.skipif(
    available("coq") is not None or unavailable() is not None,
    reason=str(available("coq") or unavailable()),
)
FLOOD = 'Proof. intros. do 2000000 idtac "flooding the grader with output". lia. Qed.'

_CHILD = """
import asyncio, json, resource, sys
from environments.atp.generator import linear_system, make
from environments.atp.prover import Checker
problem = make(linear_system, 0, 0)
proof = sys.argv[1] or problem.reference
result = asyncio.run(Checker().check(problem, proof))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"accepted": result.accepted, "message": result.message[:300], "peak_kib": peak}))
"""


def _child(proof: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, proof],
        capture_output=True, text=True, timeout=180, cwd=ROOT, check=True,
    )  # fmt: skip
    out: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


@needs_coq
def test_an_output_flood_is_stopped_and_agentbus_memory_does_not_grow() -> None:
    honest = _child("")
    flood = _child(FLOOD)
    assert honest["accepted"] is True
    assert flood["accepted"] is False and "the compile was stopped" in str(flood["message"])
    growth_mib = (int(str(flood["peak_kib"])) - int(str(honest["peak_kib"]))) / 1024
    print(f"peak RSS: honest {honest['peak_kib']} KiB, flood {flood['peak_kib']} KiB")
    # the old grader collected the whole output (+180 MiB here, +394 MiB in the run)
    assert growth_mib < 16, f"agentbus grew {growth_mib:.1f} MiB while checking the flood"


@needs_coq
async def test_an_honest_proof_with_long_output_passes() -> None:
    """400 KB of output: the old grader cut it at 16 KiB, lost its verdict line and rejected it."""
    problem = make(linear_system, 0, 0)
    noisy = 'Proof. intros. do 20000 idtac "an honest proof that talks a lot". lia. Qed.'
    result = await Checker().check(problem, noisy)
    assert result.accepted, result.message


def _best_of(k: int, text: str) -> float:
    best = float("inf")
    for _ in range(k):
        start = time.perf_counter()
        _strip_coq_comments(text)
        best = min(best, time.perf_counter() - start)
    return best


def test_comment_stripping_is_linear() -> None:
    """16,000 ``(*`` took 5.7 s with the old repeated regex (quadratic); now a few ms.

    Linear time scales 4x from 4,000 to 16,000 openers, quadratic 16x; the
    best of five runs keeps machine load out of the ratio.
    """
    small, large = "(*" * 4000, "(*" * 16000
    ratio = _best_of(5, large) / _best_of(5, small)
    assert ratio < 9, f"16,000 '(*' took {ratio:.1f}x as long as 4,000"
    assert _best_of(1, large + "*)" * 16000) < 1.0


def test_strings_cannot_hide_words_from_the_guard() -> None:
    assert _strip_coq_comments('a (* b "*)" c *) d "e (* f" g "h""i"') == 'a   d "" g ""'
    sneaky = 'Proof. idtac "(*". Admitted. idtac "*)". Qed.'
    assert refuse("coq", sneaky) == "'Admitted' is not allowed in a proof"
    assert refuse("coq", "Proof. (* Admitted *) lia. Qed.") is None
    assert refuse("coq", 'Proof. idtac "Admitted". lia. Qed.') is None
