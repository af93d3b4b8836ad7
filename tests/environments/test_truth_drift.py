"""Truth tables that cannot drift silently: every environment's run against its table.

For every stored sim:weak vs sim:strong table, a run of the table's own kind
(one block: the 30 generated tasks of a default run, at temperature 0, in
process) with the action slot varied (two coalitions: all default, and the
strong action module) goes through the check ``truth compare`` prints: each
coalition's z and the joint max-|z| test (false-alarm rate at most 1% per
run, stated and measured from the table). A change to shared code (the
parser, the simulator, the episode) that moves an environment by about 0.3
(the atp table sat 0.31 below a run after the prose test came in: z about
-3.3 at 30 tasks) fails here; a table may then be recomputed only with
``--reason``. atp is checked by ``benchmarks/truth_drift.py`` (Coq's cost).

The run's seed is fixed, so the test is deterministic for a given code; a
change that merely reshuffles the simulator's answers makes a new draw, which
the joint test flags with probability at most 1% per environment.
"""

from __future__ import annotations

import math

import pytest

from agentbus.app.truth import drift_lines
from agentbus.sim.truth import table as tables
from agentbus.sim.truth.drift import ALPHA, drift
from agentbus.sim.truth.reference import Setting, run_seeds, summarise
from environments.sandbox import unavailable

ENVS = sorted(
    t.env for t in tables.available() if (t.default, t.test) == ("sim:weak", "sim:strong")
)
NEEDS_SANDBOX = {"os", "atp"}
#: checked by benchmarks/truth_drift.py only: its episodes cost about 1.6 s of Coq CPU
#: each (one 30-task coalition measured 48 s), past what the suite can spend
BENCHMARK_ONLY = {"atp": "atp: ~1.6 s of Coq CPU an episode; python benchmarks/truth_drift.py"}
#: one block of the tables' size (a default run's task set) on the seed a default run uses
BLOCK, SEED = 30, 0


def test_every_table_environment_is_covered() -> None:
    assert {"atp", "git", "math", "navigation", "os", "robot", "shopping", "ticket"} <= set(ENVS)


def test_the_joint_test_flags_the_atp_shift_and_not_the_truth() -> None:
    table = tables.load("atp", "sim:weak", "sim:strong")
    keys = list(table.values)
    n = table.provenance.tasks_per_seed
    exact = drift(table, {k: (n, v.mean) for k, v in table.values.items()}, keys)
    assert not exact.alarm and exact.max_z == pytest.approx(0.0, abs=1e-9)
    # thresholds simulated at the run's size, each test at half the 1%: max |z| near the
    # normal Bonferroni bound at 30 tasks (3.42 for 16), both flagged together at most 1%
    assert 2.8 < exact.threshold < 3.8 and 2.3 < exact.shift_threshold < 3.3
    assert 0.003 < exact.measured_rate <= ALPHA + 0.002
    # the atp case: a 30-task run 0.31 below the table on every coalition
    low = drift(table, {k: (n, max(0.0, v.mean - 0.31)) for k, v in table.values.items()}, keys)
    assert low.alarm and all(r.z < -2 for r in low.rows)
    # a run of the other size scales the block covariance (an i.i.d. generator)
    big = drift(table, {k: (4 * n, v.mean + 0.05) for k, v in table.values.items()}, keys)
    small = drift(table, {k: (n, v.mean + 0.05) for k, v in table.values.items()}, keys)
    assert all(b.sd < s.sd for b, s in zip(big.rows, small.rows, strict=True))
    assert math.isnan(drift(table, {}, keys).max_z)


@pytest.mark.parametrize("env", ENVS)
def test_a_run_of_every_environment_is_a_draw_from_its_table(env: str) -> None:
    if env in BENCHMARK_ONLY:
        pytest.skip(BENCHMARK_ONLY[env])
    if env in NEEDS_SANDBOX and unavailable() is not None:
        pytest.skip(str(unavailable()))
    table = tables.load(env, "sim:weak", "sim:strong")
    keys = ("", "action")
    setting = Setting(env, "sim:weak", "sim:strong", per_seed=BLOCK, coalitions=keys)
    sums = run_seeds(setting, [SEED])
    run = {k: (v.tasks, v.mean) for k, v in summarise(sums).items()}
    assert sums.episodes == 2 * BLOCK == sum(n for n, _ in run.values())
    lines, alarm = drift_lines(table, run, keys, applies=True)
    assert not alarm, "\n".join(lines)
