"""Mutation check: each deliberately wrong interval method must fail a coverage test.

A coverage test that passes whatever the maths does proves nothing. This
script runs the interval coverage tests once as they are (they must pass)
and once per mutation, each applied by monkeypatching in a fresh
subprocess before pytest starts (the code under test is never edited):

* ``x0.8``, ``x0.9``: every interval of the exact estimators 0.8 (0.9) times
  as wide (the covariance scaled by 0.64, 0.81);
* ``no-pairing``: the independent form wherever the paired one would be used;
* ``banzhaf``: Banzhaf weights where Shapley's belong (the games have four
  slots; on two the two coincide);
* ``no-admission``: live snapshots take every episode as it ends instead of
  complete task blocks in issue order.

Each mutation must make at least one of the tests fail (a mutated run
stops at the first failure, ``-x``); the script prints the test that failed
and exits 1 if a mutation went uncaught or the unmutated run failed.

    python benchmarks/mutations.py            # about 2 minutes on two cores (1 min 41 s)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TESTS = [
    "tests/attribution/test_interval_coverage.py",
    "tests/attribution/test_attribution_coverage.py",
    "tests/attribution/test_live_coverage.py",
]

_SCALE = """
import dataclasses
import attribution.exact as ex, attribution.variance as va
_orig = va.linear_covariance
def _scaled(game, coef, method="auto"):
    c = _orig(game, coef, method)
    return dataclasses.replace(c, cov=c.cov * {f2})
va.linear_covariance = ex.linear_covariance = _scaled
"""

MUTATIONS: dict[str, str] = {
    "none": "",
    "x0.8": _SCALE.format(f2=0.64),
    "x0.9": _SCALE.format(f2=0.81),
    "no-pairing": """
import attribution.exact as ex, attribution.variance as va
_orig = va.linear_covariance
def _independent(game, coef, method="auto"):
    return _orig(game, coef, "independent" if method == "auto" else method)
va.linear_covariance = ex.linear_covariance = _independent
""",
    "banzhaf": """
import attribution.exact as ex
ex.shapley_matrix = ex.banzhaf_matrix
""",
    "no-admission": """
import attribution.service as sv
_init = sv.AttributionService.__init__
def _unordered(self, *args, **kwargs):
    kwargs["ordered"] = False
    _init(self, *args, **kwargs)
sv.AttributionService.__init__ = _unordered
""",
}


def run(name: str, tests: list[str]) -> tuple[int, list[str], float]:
    """Run ``tests`` under mutation ``name``; a mutated run stops at its first failure."""
    if name != "none":
        tests = ["-x", *tests]
    code = (
        "import sys, pytest\n"
        + MUTATIONS[name]
        + "\nsys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', *sys.argv[1:]]))"
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, *tests], cwd=ROOT, capture_output=True, text=True
    )
    failed = [
        line.split(" ", 1)[1].split(" - ")[0]
        for line in proc.stdout.splitlines()
        if line.startswith("FAILED ")
    ]
    return proc.returncode, failed, time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=list(MUTATIONS), default=list(MUTATIONS))
    parser.add_argument("--tests", nargs="+", default=TESTS)
    args = parser.parse_args()
    ok = True
    for name in args.only:
        code, failed, seconds = run(name, args.tests)
        if name == "none":
            verdict = "passes" if code == 0 else "FAILS (the unmutated code must pass)"
            ok = ok and code == 0
        else:
            caught = code != 0 and bool(failed)
            verdict = f"caught by {len(failed)} test(s)" if caught else "NOT CAUGHT"
            ok = ok and caught
        print(f"{name:13s} {verdict}  ({seconds:.0f} s)")
        for test in failed[:6]:
            print(f"    {test}")
        if len(failed) > 6:
            print(f"    ... {len(failed) - 6} more")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
